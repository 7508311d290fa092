"""The forecasting benchmark's speed half: fit+predict time of each model on one series.

One series is a NASA slice at each of ``TIMING_LENGTHS`` with a daily season; each model is
fitted and asked for HORIZON steps with its 90 % band, after a warm-up, until the budget is
spent. What the operator pays per workload (both histories, hourly selection, updates in
between) is measured on its own path in the coverage half.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from statistics import median

import numpy as np
from statsmodels.tsa.arima.model import ARIMA

from benchmarks.forecast_jobs import Outcome, SeriesJob, anchor_series_job, library_series_job
from benchmarks.forecast_runs import HORIZON, RunSize, TraceSpec, Workload, spread_origins
from benchmarks.report import progress
from predictive_scaler.forecasting import MODEL_NAMES, Auto, select_model
from predictive_scaler.forecasting.forecast import FloatArray

TIMING_LENGTHS = (300, 1000)
# NASA's day in its minute steps.
TIMING_SEASON = 1440
MIN_REPEATS = 3
MAX_REPEATS = 200
AUTO_CACHED = "auto (cached)"
AUTO_FRESH = "auto (fresh)"
# The anchors that run on one window (MSTL needs two days of it: see the accuracy tables).
TIMED_ANCHORS = ("AutoETS", "AutoARIMA", "AutoTheta")


# A fixed fit timed at the start and the end of a run: its order search is what a fresh
# selection spends most of its time on, so from run to run (or machine to machine, or a
# busy machine to an idle one) the cost figures scale with it.
YARDSTICK_ORDER = (2, 0, 2)
YARDSTICK_POINTS = 72
YARDSTICK_REPEATS = 60


@dataclass(frozen=True)
class Yardstick:
    """Median CPU seconds of the yardstick fit at the start and at the end of a run."""

    start: float
    end: float


def yardstick_series() -> FloatArray:
    """The same 72 points in every run: an ARMA(1,1) around 100 from a fixed seed."""
    noise = np.random.default_rng(16).normal(0.0, 5.0, YARDSTICK_POINTS + 1)
    values = np.empty(YARDSTICK_POINTS)
    level = 0.0
    for index in range(YARDSTICK_POINTS):
        level = 0.7 * level + noise[index + 1] + 0.3 * noise[index]
        values[index] = 100.0 + level
    return values


def yardstick_seconds() -> float:
    """Median CPU seconds of one statsmodels ARIMA fit on ``yardstick_series``, cold."""
    series = yardstick_series()

    def fit() -> float:
        start = time.process_time()
        ARIMA(series, order=YARDSTICK_ORDER, trend="c").fit(return_params=True)
        return time.process_time() - start

    fit()  # the first pays for imports and caches
    return median(fit() for _ in range(YARDSTICK_REPEATS))


@dataclass(frozen=True)
class SpeedRow:
    model: str
    per_series: tuple[float, ...]


def median_seconds(call: Callable[[], Outcome], budget: float) -> float:
    """Median of the calls' own timings (each from empty caches: see ``timed``)."""
    call()  # first calls pay for imports
    times: list[float] = []
    while len(times) < MIN_REPEATS or (sum(times) < budget and len(times) < MAX_REPEATS):
        times.append(call().seconds)
    return median(times)


def time_one_series(series: FloatArray, season: int, budget: float) -> dict[str, list[float]]:
    """Median fit+predict seconds per model at each of TIMING_LENGTHS (the series' last points)."""
    timings: dict[str, list[float]] = {}
    for index, length in enumerate(TIMING_LENGTHS):
        y = series[-length:]
        selection = select_model(y, horizon=HORIZON, season_length=season)
        jobs: dict[str, SeriesJob] = {
            name: library_series_job(name) for name in MODEL_NAMES if name != Auto.name
        }
        jobs[AUTO_CACHED] = library_series_job(Auto.name, selection)
        jobs[AUTO_FRESH] = library_series_job(Auto.name)
        jobs |= {name: anchor_series_job(name) for name in TIMED_ANCHORS}
        for name, job in jobs.items():
            timings.setdefault(name, []).append(median_seconds(partial(job, y, season), budget))
        progress("timing one series", index + 1, len(TIMING_LENGTHS))
    return timings


def speed_rows(
    size: RunSize, loaded: Sequence[tuple[TraceSpec, Sequence[Workload]]]
) -> list[SpeedRow]:
    nasa = loaded[0][1][0]
    longest = TIMING_LENGTHS[-1]
    slice_end = spread_origins(nasa.observed, longest, 3)[1]
    series = nasa.values[slice_end - longest : slice_end]
    per_series = time_one_series(series, TIMING_SEASON, size.timing_budget_seconds)
    library = [name for name in MODEL_NAMES if name != Auto.name]
    order = [*library, AUTO_CACHED, AUTO_FRESH, *TIMED_ANCHORS]
    return [SpeedRow(name, tuple(per_series[name])) for name in order]
