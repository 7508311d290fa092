"""A workload's load histories, kept per object and extended with only their new samples.

The long history (two weeks at 5 minutes) costs a few range queries once;
after that a cycle asks the metric source only for the samples since the last
one (and the newest few again: a sample whose scrape had not yet arrived may
have been missing). So a cycle's query cost does not grow with the window.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.operator.sources import LoadSeries
from predictive_scaler.scaling import LoadHistory

# Samples read again each cycle: the newest may have lacked a scrape still in flight.
REREAD_SAMPLES = 2


class RangeSource(Protocol):
    def samples(
        self, series: LoadSeries, *, step: float, start: float, end: float
    ) -> FloatArray: ...


@dataclass
class CachedHistory:
    """One series' samples on a fixed grid, the last read ending at ``end``."""

    series: LoadSeries | None = None
    step: float = 0.0
    values: FloatArray = field(default_factory=lambda: np.empty(0))
    end: float = math.nan
    # Samples queried by the last read, for tests and metrics of the query cost.
    last_read_points: int = 0

    def read(
        self, source: RangeSource, series: LoadSeries, *, step: float, points: int, now: float
    ) -> LoadHistory:
        """The last ``points`` samples of ``series`` up to ``now``.

        A MetricsError from the source leaves the cache as it was.
        """
        end = math.floor(now / step) * step
        start = end - (points - 1) * step
        reusable = (
            series == self.series
            and step == self.step
            and self.values.size == points
            and start <= self.end <= end
        )
        if not reusable:
            fresh = source.samples(series, step=step, start=start, end=end)
            self._keep(series, step, fresh, end, fresh.size)
            return LoadHistory(fresh.copy(), step, end)
        if self.end == end:
            self.last_read_points = 0
            return LoadHistory(self.values.copy(), step, end)
        new_from = max(start, self.end - (REREAD_SAMPLES - 1) * step)
        tail = source.samples(series, step=step, start=new_from, end=end)
        shift = round((end - self.end) / step)
        values = np.concatenate([self.values[shift:], np.full(shift, np.nan)])
        values[values.size - tail.size :] = tail
        self._keep(series, step, values, end, tail.size)
        return LoadHistory(values.copy(), step, end)

    def last_read(self, series: LoadSeries, step: float) -> LoadHistory | None:
        """What the last successful read of ``series`` at ``step`` returned, if any."""
        if series != self.series or step != self.step or self.values.size == 0:
            return None
        return LoadHistory(self.values.copy(), step, self.end)

    def _keep(
        self, series: LoadSeries, step: float, values: FloatArray, end: float, read: int
    ) -> None:
        self.series, self.step, self.values, self.end = series, step, values, end
        self.last_read_points = read
