"""An overload budget kept online: the forecast quantile follows the overloads it causes.

The user states the share of time the load may exceed what ready pods serve
(``overloadBudget``). Which quantile of the forecast meets it depends on
everything between the forecast and the pods: how well the intervals are
calibrated on this workload, the rounding to whole replicas, start-up,
stabilisation. So the quantile is not derived; it is steered by what
happened, with the quantile tracker of Angelopoulos, Candès and Tibshirani
("Conformal PID Control for Time Series Prediction", NeurIPS 2023, the
"P" controller; the same update as Gibbs and Candès' adaptive conformal
inference, NeurIPS 2021, on the threshold instead of the level):

    z <- z + rate * (overloaded - budget)

after each load sample. Summed over T samples, the updates telescope:
``(share overloaded) - budget = (z_T - z_0) / (rate * T)``, so while z stays
within its bounds the realised share converges to the budget at rate 1/T,
whatever the load, with no assumption on the forecast's errors. At the upper
bound an overload no longer raises z (the budget cannot be kept: a spike no
forecast sees, or maxReplicas); at the lower bound a quiet step no longer
lowers it (the budget is kept with room to spare). Status says which.

``z`` is in units of the forecast's spread: the load provisioned is
``mean + z * sigma`` with ``sigma`` read from the forecast's interval, so
``z`` maps to a quantile (reported as one) and one rate suits every workload.

One threshold for every step spends the budget evenly. Spending it where a
replica buys the least (per step, the whole number of replicas minimising
replicas + lambda * P(overload), the tracker steering lambda; the same
telescoping bound holds) was replayed on the public traces (issue 17): at
the HPA's overload it saved 8.5 / 9.7 / 13.0 % on NASA against 8.6 / 9.3 /
12.8 % (start-up 1, 2, 5 min) and 4.2 % on Alibaba against 4.6 %; choosing
only how to round each step's need was worse (NASA out of the box, 1 min:
7.6 % against 8.5 %). Within noise, so the threshold stays one number.

An overload whose load lay above what even the highest threshold would have
provisioned for its step, in whole replicas, at the decision that sized it
is counted apart ("beyond the ceiling"): no budget buys it off, only standing
headroom or a forecast that sees it coming. Each decision leaves the
ceiling it saw for the step its new pods serve first (:class:`Ceiling`), and
the sample of that step is judged against it once counted.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from statistics import NormalDist

import numpy as np

from predictive_scaler.forecasting import Forecast
from predictive_scaler.forecasting.forecast import FloatArray

# How far one overload moves the threshold, in forecast spreads. Large enough
# that a budget is found again within a day of minutes after the load
# changes character, small enough that one overload does not buy a replica.
RATE = 0.1
# The threshold's range: below the mean minus one spread, the forecast is
# ignored (the reactive floor still holds); above five spreads (a quantile of
# 0.9999997) more headroom is a standing cost no budget asks for.
LOWEST = -1.0
HIGHEST = 5.0
# The realised share is reported over this window, in hourly buckets.
WINDOW_SECONDS = 24 * 3600.0
BUCKET_SECONDS = 3600.0

_NORMAL = NormalDist()


@dataclass(frozen=True)
class HourCount:
    """Samples counted in the hour from ``start``, how many overloaded, how many beyond the
    ceiling."""

    start: float
    samples: int
    overloaded: int
    beyond_ceiling: int = 0


@dataclass(frozen=True)
class Ceiling:
    """The load the highest threshold provisions for the step sampled at ``time``, as a
    decision one lead time earlier saw it."""

    time: float
    load: float


@dataclass(frozen=True)
class OverloadTracker:
    """The threshold in use and what it was steered by; a plain value kept in status.

    ``threshold`` is None until the first sample is counted: it then starts
    where the forecast's own calibration says the budget lies.
    """

    threshold: float | None = None
    counted_until: float | None = None
    hours: tuple[HourCount, ...] = ()
    # Ceilings of steps not yet counted, oldest first (a lead time's worth).
    ceilings: tuple[Ceiling, ...] = ()

    def current(self, budget: float) -> float:
        """The threshold to provision at, in forecast spreads above the mean."""
        if self.threshold is not None:
            return self.threshold
        return min(max(_NORMAL.inv_cdf(1.0 - budget), LOWEST), HIGHEST)

    def is_new(self, sample_time: float) -> bool:
        """Whether the sample taken at ``sample_time`` is yet to be counted."""
        return self.counted_until is None or sample_time > self.counted_until

    def ceiling_at(self, sample_time: float, tolerance: float) -> float | None:
        """The ceiling a decision left for the step sampled at ``sample_time`` (within
        ``tolerance`` seconds), None when no decision sized it."""
        matching = [c.load for c in self.ceilings if abs(c.time - sample_time) <= tolerance]
        return matching[-1] if matching else None

    def expecting(self, ceiling: Ceiling) -> OverloadTracker:
        """Remember the ceiling a decision saw for a step to come (the newest per step)."""
        if not self.is_new(ceiling.time):
            return self
        kept = tuple(c for c in self.ceilings if c.time != ceiling.time)
        return replace(self, ceilings=(*kept, ceiling))

    def count(
        self, budget: float, sample_time: float, overloaded: bool, beyond_ceiling: bool = False
    ) -> OverloadTracker:
        """Count the sample taken at ``sample_time`` once, and steer the threshold by it.

        ``beyond_ceiling``: it overloaded beyond what the highest threshold provisioned.
        """
        if not self.is_new(sample_time):
            return self
        moved = self.current(budget) + RATE * (float(overloaded) - budget)
        beyond = int(overloaded and beyond_ceiling)
        bucket = sample_time - sample_time % BUCKET_SECONDS
        kept = [h for h in self.hours if h.start > sample_time - WINDOW_SECONDS]
        if kept and kept[-1].start == bucket:
            last = kept.pop()
            kept.append(
                replace(
                    last,
                    samples=last.samples + 1,
                    overloaded=last.overloaded + overloaded,
                    beyond_ceiling=last.beyond_ceiling + beyond,
                )
            )
        else:
            kept.append(HourCount(bucket, 1, int(overloaded), beyond))
        return OverloadTracker(
            min(max(moved, LOWEST), HIGHEST),
            sample_time,
            tuple(kept),
            tuple(c for c in self.ceilings if c.time > sample_time),
        )

    @property
    def samples(self) -> int:
        return sum(h.samples for h in self.hours)

    @property
    def beyond_ceiling(self) -> int:
        """Overloaded samples within the window that were beyond the ceiling."""
        return sum(h.beyond_ceiling for h in self.hours)

    @property
    def overloaded(self) -> int:
        return sum(h.overloaded for h in self.hours)

    @property
    def realised(self) -> float | None:
        """The share of counted samples overloaded within the window; None before any."""
        samples = self.samples
        return None if samples == 0 else self.overloaded / samples

    @property
    def beyond_ceiling_share(self) -> float | None:
        """The share of counted samples overloaded beyond the ceiling; None before any."""
        samples = self.samples
        return None if samples == 0 else self.beyond_ceiling / samples

    def quantile(self, budget: float) -> float:
        """The forecast quantile the threshold stands for, were the errors normal."""
        return _NORMAL.cdf(self.current(budget))

    @property
    def at_limit(self) -> str | None:
        """ "highest" or "lowest" when the threshold is pinned at a bound, else None."""
        if self.threshold is None:
            return None
        if self.threshold >= HIGHEST:
            return "highest"
        if self.threshold <= LOWEST:
            return "lowest"
        return None


def provisioned(forecast: Forecast, threshold: float) -> FloatArray:
    """The load to provision at each step: ``threshold`` spreads above the forecast mean.

    The spread is read from the upper half of the forecast's interval (the
    interval is conformal, from the model's own errors, and load's errors are
    skewed upwards: the upper half is the side overload lives on).
    """
    half_width = np.maximum(forecast.upper - forecast.mean, 0.0)
    sigma = half_width / _NORMAL.inv_cdf((1.0 + forecast.level) / 2.0)
    return forecast.mean + threshold * sigma
