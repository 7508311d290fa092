"""When the load leaves the forecast's band and stays out, the selection no longer describes it.

A selection is made on a schedule (hourly by default); in between, the fitted
models are only updated with the new samples and keep the parameters the
selection chose. After a level shift (a deploy, traffic moved between
clusters, a batch switching on) those parameters can be far from right: a
model selected on hours of flat load smooths so slowly that its forecast
trails the new level until the next selection, and the errors it makes
meanwhile keep the live band (calibrated on its last 300 forecasts) wide
for hours after. Replayed on a load switching between 1 and 12 every 6 h,
the predictive policy cost 65 % more replica-minutes than the HPA; re-selected
on a break, 17 % less.

So each one-step-ahead band is compared with the sample it was for. A
calibrated band at level p leaves (1 - p) / 2 of the samples above it and as
many below; a run of samples in a row beyond it on the same side that
independent errors would make less than once in ``FALSE_ALARM_STEPS`` steps
(three at 90 %, four at 80 %) says the selection has stopped describing
the load, and it is made again at once. The run starts afresh at each
selection, so a load that keeps shifting is re-selected at most once a run;
on the public traces it happens about once a day.

The live errors are kept: the few the broken selection made are a small
share of them. Dropping them all on a break instead left the band to a
handful of new errors, the widest of them, and cost more (NASA, quick
scaling benchmark: 3.6 % fewer replica-minutes than the HPA against 7.1 %).
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

from predictive_scaler.forecasting.forecast import FloatArray

# How rarely a run that makes a break may happen by chance alone, in steps: at
# 1-minute steps, about once in five days were the load as calibrated.
FALSE_ALARM_STEPS = 8000
# Judged samples kept; runs longer than this (bands below 15 %) count as this.
_LONGEST_RUN = 8
# One-step bands kept while their samples are awaited.
_PENDING = 8


def run_length(level: float) -> int:
    """Samples in a row beyond a band at ``level``, on one side, that make a break."""
    beyond_one_side = (1.0 - level) / 2.0
    return min(
        max(math.ceil(math.log(FALSE_ALARM_STEPS) / -math.log(beyond_one_side)), 2), _LONGEST_RUN
    )


@dataclass(frozen=True)
class _Band:
    """The one-step band of a forecast made when the newest sample had index ``last``."""

    last: int
    lower: float
    upper: float


class BreakWatch:
    """Counts the newest one-step samples beyond their band on the same side.

    Steps are indexed on the series' clock (``end_time / step``), as
    :class:`~predictive_scaler.forecasting.calibration.LiveErrors` indexes
    them, so evaluations that skip or repeat a step still line up.
    """

    def __init__(self) -> None:
        self._pending: deque[_Band] = deque(maxlen=_PENDING)
        self._sides: deque[int] = deque(maxlen=_LONGEST_RUN)

    def expect(self, last: int, lower: float, upper: float) -> None:
        """Keep the band forecast for the step after ``last``; a remade one replaces it."""
        if self._pending and self._pending[-1].last == last:
            self._pending.pop()
        self._pending.append(_Band(last, lower, upper))

    def observe(self, values: FloatArray, last: int) -> None:
        """Judge the awaited samples in ``values`` (newest at clock index ``last``)."""
        offset = values.size - 1 - last
        waiting: deque[_Band] = deque(maxlen=_PENDING)
        for band in self._pending:
            index = band.last + 1 + offset
            if band.last + 1 > last:
                waiting.append(band)
            elif index >= 0:
                actual = float(values[index])
                self._sides.append((actual > band.upper) - (actual < band.lower))
        self._pending = waiting

    def broken(self, level: float) -> str | None:
        """ "above" or "below" when the newest judged samples, a run's worth for bands at
        ``level``, all lay beyond their band on that side; else None."""
        run = run_length(level)
        newest = list(self._sides)[-run:]
        if len(newest) < run or abs(sum(newest)) < run:
            return None
        return "above" if newest[0] > 0 else "below"

    def reset(self) -> None:
        """Start counting afresh: a new selection is judged on its own bands."""
        self._pending.clear()
        self._sides.clear()
