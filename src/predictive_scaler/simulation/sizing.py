"""Where a predictive policy's replicas go: its forecast, what it sized for, rounding, the rest.

The replay's cost figure is one number; this splits it along ``scaling.decide``'s own steps,
summed over the decisions that had a forecast, in replicas of the capacity: the forecast
mean for the step new pods serve first; the load the decision sized for (that step's load
at the budget's threshold, or the interval's upper bound; on a scale-down, the highest such
load within the horizon, which it keeps replicas for); that load in whole replicas; and
what the decision asked for once the reactive floor, the scale-down window, the rate
limits (and, following the HPA, the HPA) had their say. The gaps between them say which
step costs what, on average: a gap can be negative (a scale-down keeps fewer replicas than
the horizon's peak would need when the current count is lower).
"""

from __future__ import annotations

from dataclasses import dataclass

from predictive_scaler.scaling import Decision, ScalingSpec


@dataclass(frozen=True)
class SizingTally:
    """Sums over decisions with a forecast, in replicas of ``per_replica``."""

    decisions: int = 0
    forecast: float = 0.0
    sized_for: float = 0.0
    whole: float = 0.0
    asked: float = 0.0

    def counting(self, spec: ScalingSpec, decision: Decision) -> SizingTally:
        """With ``decision`` counted, if it sized from a forecast."""
        if decision.forecast is None or decision.load_bound is None:
            return self
        per = spec.per_replica
        return SizingTally(
            self.decisions + 1,
            self.forecast + float(decision.forecast.mean[-1]) / per,
            self.sized_for + decision.load_bound / per,
            self.whole + spec.replicas_for(decision.load_bound),
            self.asked + decision.desired_replicas,
        )

    def __add__(self, other: SizingTally) -> SizingTally:
        return SizingTally(
            self.decisions + other.decisions,
            self.forecast + other.forecast,
            self.sized_for + other.sized_for,
            self.whole + other.whole,
            self.asked + other.asked,
        )

    def means(self) -> tuple[float, float, float, float] | None:
        """Per decision: forecast, sized for, whole replicas, asked; None before any."""
        if self.decisions == 0:
            return None
        n = self.decisions
        return self.forecast / n, self.sized_for / n, self.whole / n, self.asked / n
