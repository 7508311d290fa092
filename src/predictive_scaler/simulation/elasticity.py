"""The SPEC Research Group's elasticity metrics, so our figures compare with the literature.

Herbst et al., "Quantifying Cloud Performance and Dependability: Taxonomy,
Metric Design, and Emerging Challenges", ACM TOMPECS 3(4), 2018, section 4
(and the SPEC RG's elasticity metrics it consolidates): with demand ``d_t``
the fewest resources that serve the load and supply ``s_t`` the resources
that do, over a time ``T``:

- under-provisioning accuracy  ``100/T * sum (d_t - s_t)+ / max(d_t, e) dt``
- over-provisioning accuracy   ``100/T * sum (s_t - d_t)+ / max(d_t, e) dt``
- under-/over-provisioning timeshare: the share of time with ``s_t < d_t`` /
  ``s_t > d_t``
- instability: the share of time, from the second step on, in which supply
  and demand do not change in the same direction (one moves, the other does
  not, or they move apart).

Here demand is the replicas that carry a step's load at 100 % of their
capacity (the replay's overload line) and supply is the *ready* replicas,
those that serve; the starting ones are paid for in replica-minutes, which
every report gives beside these. ``e`` is one replica, so an idle step's
over-provisioning counts per replica kept. A step with no load sample is
left out. The figures are kept as time-weighted sums, so runs add up and
the percentages of a sum are those of all its steps together.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.scaling.spec import ROUNDING


@dataclass(frozen=True)
class Elasticity:
    """Time-weighted sums behind the five metrics; the properties are percentages."""

    seconds: float = 0.0
    under_share_seconds: float = 0.0
    over_share_seconds: float = 0.0
    under_seconds: float = 0.0
    over_seconds: float = 0.0
    # Instability is scored from each run's second step: its own time base.
    transition_seconds: float = 0.0
    unstable_seconds: float = 0.0

    def __add__(self, other: Elasticity) -> Elasticity:
        return Elasticity(
            **{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)}
        )

    def __radd__(self, other: object) -> Elasticity:
        # sum() starts from 0.
        if other == 0:
            return self
        return NotImplemented

    @staticmethod
    def _percent(part: float, whole: float) -> float:
        return 100.0 * part / whole if whole > 0 else 0.0

    @property
    def under_accuracy(self) -> float:
        return self._percent(self.under_share_seconds, self.seconds)

    @property
    def over_accuracy(self) -> float:
        return self._percent(self.over_share_seconds, self.seconds)

    @property
    def under_timeshare(self) -> float:
        return self._percent(self.under_seconds, self.seconds)

    @property
    def over_timeshare(self) -> float:
        return self._percent(self.over_seconds, self.seconds)

    @property
    def instability(self) -> float:
        return self._percent(self.unstable_seconds, self.transition_seconds)

    def metrics(self) -> dict[str, float]:
        """The five percentages by their names, for reports."""
        return {name: float(getattr(self, name)) for name in METRICS}


METRICS = ("under_accuracy", "over_accuracy", "under_timeshare", "over_timeshare", "instability")


def demand(load: FloatArray, capacity: float) -> FloatArray:
    """Replicas each step's load needs at full capacity (NaN where there is no sample)."""
    need = np.ceil(load / capacity - ROUNDING)
    return np.where(np.isfinite(load), np.maximum(need, 0.0), np.nan)


def elasticity(demanded: FloatArray, supplied: np.ndarray, seconds: FloatArray) -> Elasticity:
    """The metrics of ``supplied`` against ``demanded``, step ``i`` lasting ``seconds[i]``."""
    supply = np.asarray(supplied, dtype=np.float64)
    known = np.isfinite(demanded)
    need, have, weight = demanded[known], supply[known], seconds[known]
    short = np.maximum(need - have, 0.0)
    spare = np.maximum(have - need, 0.0)
    scale = np.maximum(need, 1.0)
    # Directions between consecutive known steps; an unknown step breaks no pair.
    moved = np.sign(np.diff(have)) != np.sign(np.diff(need))
    return Elasticity(
        seconds=float(weight.sum()),
        under_share_seconds=float((short / scale * weight).sum()),
        over_share_seconds=float((spare / scale * weight).sum()),
        under_seconds=float(weight[short > 0].sum()),
        over_seconds=float(weight[spare > 0].sum()),
        transition_seconds=float(weight[1:].sum()),
        unstable_seconds=float(weight[1:][moved].sum()),
    )
