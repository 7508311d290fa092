"""A workload's load histories, kept per object and extended with only their new samples.

The long history (two weeks at 5 minutes) costs a few range queries once;
after that a cycle asks the metric source only for the samples since the last
one (and the newest few again: a sample whose scrape had not yet arrived may
have been missing). So a cycle's query cost does not grow with the window.
An evaluation reads both within its time budget (:class:`Deadline`).
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.forecasting.seasons import TimedSeries
from predictive_scaler.operator import metrics
from predictive_scaler.operator.resource import ForecastSettings
from predictive_scaler.operator.sources import LoadSeries, MetricsError, MetricSource
from predictive_scaler.scaling import LoadHistory
from predictive_scaler.units import format_duration

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
        if self.end == end and np.isfinite(self.values[-1]):
            self.last_read_points = 0
            return LoadHistory(self.values.copy(), step, end)
        # The newest samples again, and those since: on the same end only while the newest
        # is still missing (a backend that serves points late, a scrape still in flight).
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


@dataclass(frozen=True)
class Deadline:
    """An evaluation's time budget from when it started (monotonic clock), and its metric source."""

    source: MetricSource
    started: float
    budget_seconds: float

    @property
    def at(self) -> float:
        return self.started + self.budget_seconds

    def check(self) -> None:
        """Raise a Timeout MetricsError once the budget is spent."""
        if time.monotonic() >= self.at:
            budget = format_duration(self.budget_seconds)
            raise MetricsError("Timeout", f"the evaluation's {budget} budget was spent")

    def source_within(self) -> MetricSource:
        """The metric source, its timeout cut to what is left of the budget."""
        left = max(0.1, self.at - time.monotonic())
        if left >= self.source.timeout:
            return self.source
        return self.source.with_timeout(left)


@dataclass(frozen=True)
class Histories:
    """What one evaluation read.

    ``recent`` decides; when it could not be read (``error``) it is all
    missing and the object holds. Without a new long history the forecast
    goes on with the one read last (or none) and ``long_problem`` says why.
    """

    recent: LoadHistory
    long: TimedSeries | None
    error: MetricsError | None = None
    long_problem: str | None = None


def read_histories(
    deadline: Deadline,
    recent_series: LoadSeries,
    settings: ForecastSettings,
    resource: str | None,
    caches: tuple[CachedHistory, CachedHistory],
    *,
    now: float,
    min_rate_window: float,
) -> Histories:
    """The recent and the long history, each from its cache (recent, long) extended."""
    recent_cache, long_cache = caches
    step, points = settings.step_seconds, settings.history_points
    recent_window = recent_series.rate_window
    try:
        recent = recent_cache.read(
            deadline.source_within(), recent_series, step=step, points=points, now=now
        )
    except MetricsError as error:
        return Histories(LoadHistory(np.full(points, np.nan), step, now), None, error)
    metrics.HISTORY_POINTS_READ.labels("recent").inc(recent_cache.last_read_points)
    step = settings.long_step_seconds
    # A rate over one long step: the coarse samples average all the load, none twice.
    long_window = max(step, min_rate_window)
    long_series = dataclasses.replace(recent_series, rate_window=long_window)
    # A rate describes the window before its timestamp: the long samples are
    # placed at the same point of their windows as the recent ones, or the
    # profile of the day would run minutes late against the recent window.
    # (Memory is a gauge, and a user's query has windows of its own.)
    lag = (long_window - recent_window) / 2 if resource == "cpu" else 0.0
    problem = None
    try:
        deadline.check()
        long: LoadHistory | None = long_cache.read(
            deadline.source_within(),
            long_series,
            step=step,
            points=settings.long_history_points,
            now=now,
        )
        metrics.HISTORY_POINTS_READ.labels("long").inc(long_cache.last_read_points)
    except MetricsError as error:
        long = long_cache.last_read(long_series, step)
        problem = f"the long history could not be read: {error}"
    timed = None if long is None else TimedSeries(long.values, step, long.end_time - lag)
    return Histories(recent, timed, None, problem)
