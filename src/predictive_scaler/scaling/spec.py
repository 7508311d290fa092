"""The scaling part of a PredictiveScaler's spec, validated once at the boundary."""

from __future__ import annotations

import math
from typing import Self

from pydantic import Field, model_validator

from predictive_scaler.scaling.behavior import DEFAULT_BEHAVIOR, ApiModel, Behavior

# The most replicas a Kubernetes scale subresource can hold (int32).
MAX_REPLICAS = 2**31 - 1
# A need within this sliver above a whole number of replicas (or steps) is
# that number: float division must not buy a replica for a rounding error.
ROUNDING = 1e-9


class ScalingSpec(ApiModel):
    """How many replicas a load needs, how far ahead to look, and how fast to move.

    ``targetPerReplica`` is the load one replica should carry (at the
    utilisation the user wants, e.g. 0.7 of a core); ``leadTimeSeconds`` is
    how long a new pod takes to serve; ``interval`` is the level of the
    prediction interval whose upper bound is provisioned for.
    """

    min_replicas: int = Field(default=1, ge=1)
    max_replicas: int = Field(ge=1)
    target_per_replica: float = Field(gt=0, allow_inf_nan=False)
    lead_time_seconds: float = Field(default=120.0, ge=0, allow_inf_nan=False)
    interval: float = Field(default=0.9, gt=0, lt=1)
    behavior: Behavior = DEFAULT_BEHAVIOR

    @model_validator(mode="after")
    def _min_within_max(self) -> Self:
        if self.min_replicas > self.max_replicas:
            raise ValueError(
                f"minReplicas ({self.min_replicas}) must not exceed maxReplicas "
                f"({self.max_replicas})"
            )
        return self

    def horizon_steps(self, step_seconds: float) -> int:
        """Steps to forecast: the lead time, rounded up to whole steps, plus one decision step.

        Replicas added now serve from one lead time on, and must carry the
        load until the next decision's replicas are ready.
        """
        return math.ceil(self.lead_time_seconds / step_seconds - ROUNDING) + 1

    def replicas_for(self, load: float) -> int:
        """Replicas needed to carry ``load`` at ``targetPerReplica`` each."""
        # Clamped so a raw sample near +/- the float maximum (load / target =
        # +/-inf) asks for 0 or "more than any workload runs" instead of
        # raising OverflowError.
        ratio = min(max(load / self.target_per_replica, 0.0), MAX_REPLICAS)
        return max(0, math.ceil(ratio - ROUNDING))
