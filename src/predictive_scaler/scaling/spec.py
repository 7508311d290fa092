"""The scaling part of a PredictiveScaler's spec, validated once at the boundary."""

from __future__ import annotations

import math
from typing import Self

from pydantic import Field, model_validator

from predictive_scaler.scaling.behavior import PREDICTIVE_BEHAVIOR, ApiModel, Behavior

# The most replicas a Kubernetes scale subresource can hold (int32).
MAX_REPLICAS = 2**31 - 1
# A need within this sliver above a whole number of replicas (or steps) is
# that number: float division must not buy a replica for a rounding error.
ROUNDING = 1e-9
# The share of time the load may exceed what ready pods serve, when the user
# states a capacity but no budget: about what a reactive HPA at 70 %
# utilisation overloads on the public web and cluster traces (BENCHMARKS.md).
DEFAULT_OVERLOAD_BUDGET = 0.01
# A budget above this is no longer a budget: half the time overloaded.
MAX_OVERLOAD_BUDGET = 0.5


class ScalingSpec(ApiModel):
    """How many replicas a load needs, how far ahead to look, and how fast to move.

    Replicas are sized one of two ways:

    - ``capacityPerReplica``: the load at which one replica is saturated, with
      ``overloadBudget``, the share of time the load may exceed what ready pods
      serve. The forecast quantile provisioned for is steered online so that
      the realised share meets the budget (:mod:`.budget`).
    - ``targetPerReplica``: the load one replica should carry (at the
      utilisation the user wants, e.g. 0.7 of a core), provisioned for at the
      upper bound of the ``interval``, as the HPA's target is.

    ``leadTimeSeconds`` is how long a new pod takes to serve. ``behavior``
    None means the predictive default (:data:`PREDICTIVE_BEHAVIOR`); a given
    one keeps the HPA's exact semantics.
    """

    min_replicas: int = Field(default=1, ge=1)
    max_replicas: int = Field(ge=1)
    target_per_replica: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    capacity_per_replica: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    overload_budget: float = Field(default=DEFAULT_OVERLOAD_BUDGET, gt=0, le=MAX_OVERLOAD_BUDGET)
    lead_time_seconds: float = Field(default=120.0, ge=0, allow_inf_nan=False)
    interval: float = Field(default=0.9, gt=0, lt=1)
    behavior: Behavior | None = None

    @model_validator(mode="after")
    def _min_within_max(self) -> Self:
        if self.min_replicas > self.max_replicas:
            raise ValueError(
                f"minReplicas ({self.min_replicas}) must not exceed maxReplicas "
                f"({self.max_replicas})"
            )
        if (self.target_per_replica is None) == (self.capacity_per_replica is None):
            raise ValueError("set exactly one of targetPerReplica and capacityPerReplica")
        return self

    @property
    def budgeted(self) -> bool:
        """True when replicas are sized from a capacity and an overload budget."""
        return self.capacity_per_replica is not None

    @property
    def per_replica(self) -> float:
        """The load one replica is sized for: its capacity, or its target."""
        per_replica = self.capacity_per_replica or self.target_per_replica
        assert per_replica is not None  # the validator requires one of them
        return per_replica

    @property
    def effective_behavior(self) -> Behavior:
        return PREDICTIVE_BEHAVIOR if self.behavior is None else self.behavior

    def horizon_steps(self, step_seconds: float) -> int:
        """Steps to forecast: the lead time, rounded up to whole steps, plus one decision step.

        Replicas added now serve from one lead time on, and must carry the
        load until the next decision's replicas are ready. ``auto`` selects
        its model by backtesting over this horizon. Selecting over a longer
        one (5 or 6 steps, about the forecasting benchmark's) at a 1-step
        start-up was replayed out of the box (issue 17) and is noise, not a
        gain: replica-minutes saved against the HPA went from 6.6 to 8.5 % on
        NASA's July week (6 steps) but from 8.9 to 8.3 % on an August week (5),
        and on Azure and Google the overload minutes rose (25 to 35, 240 to 270).
        """
        return lead_steps(self.lead_time_seconds, step_seconds) + 1

    def replicas_for(self, load: float) -> int:
        """Replicas needed to carry ``load`` at :attr:`per_replica` each."""
        # Clamped so a raw sample near +/- the float maximum (load / target =
        # +/-inf) asks for 0 or "more than any workload runs" instead of
        # raising OverflowError.
        ratio = min(max(load / self.per_replica, 0.0), MAX_REPLICAS)
        return max(0, math.ceil(ratio - ROUNDING))


def lead_steps(lead_time_seconds: float, step_seconds: float) -> int:
    """A lead time in whole steps, rounded up: how long a new pod takes to serve."""
    return math.ceil(lead_time_seconds / step_seconds - ROUNDING)
