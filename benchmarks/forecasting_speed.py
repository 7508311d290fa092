"""The forecasting benchmark's speed half: fit+predict time on one series and on many.

One series is a NASA slice at each of ``TIMING_LENGTHS``; the many series are different
windows of every trace long enough to give one, forecast one after the other.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from statistics import median

from benchmarks.forecast_runs import (
    ANCHORS,
    HORIZON,
    RunSize,
    SeriesJob,
    TraceSpec,
    Workload,
    library_job,
    model_jobs,
    spread_origins,
)
from benchmarks.report import progress
from predictive_scaler.forecasting import MODEL_NAMES, Auto, ModelSelection, select_model
from predictive_scaler.forecasting.forecast import FloatArray

TIMING_LENGTHS = (300, 1000)
SLOW_PER_SERIES = 0.02
MIN_REPEATS = 3
MAX_REPEATS = 200
AUTO_CACHED = "auto (cached)"
AUTO_FRESH = "auto (fresh)"

Window = tuple[FloatArray, int | None]


@dataclass(frozen=True)
class SpeedRow:
    model: str
    per_series: tuple[float, ...]
    many_series_seconds: float
    many_series_note: str


def median_seconds(call: Callable[[], object], budget: float) -> float:
    call()  # first calls pay for imports and caches
    times: list[float] = []
    while len(times) < MIN_REPEATS or (sum(times) < budget and len(times) < MAX_REPEATS):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return median(times)


def jobs_without_auto() -> dict[str, SeriesJob]:
    # auto is timed apart: once reusing a selection and once making its own.
    return {name: job for name, job in model_jobs().items() if name != Auto.name}


def time_one_series(series: FloatArray, season: int, budget: float) -> dict[str, list[float]]:
    """Median fit+predict seconds per model at each of TIMING_LENGTHS (the series' last points)."""
    timings: dict[str, list[float]] = {}
    for index, length in enumerate(TIMING_LENGTHS):
        y = series[-length:]
        selection = select_model(y, horizon=HORIZON, season_length=season)
        jobs = jobs_without_auto() | {
            AUTO_CACHED: library_job(Auto.name, selection),
            AUTO_FRESH: library_job(Auto.name),
        }
        for name, job in jobs.items():
            timings.setdefault(name, []).append(median_seconds(partial(job, y, season), budget))
        progress("timing one series", index + 1, len(TIMING_LENGTHS))
    return timings


def timing_windows(sources: Sequence[tuple[Workload, int | None]], count: int) -> list[Window]:
    """``count`` observed windows of the shortest timing length, spread over each source."""
    windows: list[Window] = []
    length = TIMING_LENGTHS[0]
    for index, (workload, season) in enumerate(sources):
        wanted = count // len(sources) + (index < count % len(sources))
        for origin in spread_origins(workload.observed, length, wanted):
            windows.append((workload.values[origin - length : origin], season))
    return windows


def seconds_for(windows: Sequence[Window], job: SeriesJob) -> float:
    start = time.perf_counter()
    for y, season in windows:
        job(y, season)
    return time.perf_counter() - start


def time_many_series(
    windows: Sequence[Window], per_series: dict[str, list[float]], sample_size: int
) -> dict[str, tuple[float, str]]:
    """Seconds to forecast every window, per model, and how: measured or extrapolated."""
    sample = windows[:: max(1, len(windows) // sample_size)][:sample_size]
    scale_up = len(windows) / len(sample)
    extrapolated = f"extrapolated from {len(sample)}"
    totals: dict[str, tuple[float, str]] = {}
    jobs = jobs_without_auto()
    for index, (name, job) in enumerate(jobs.items()):
        if per_series[name][0] > SLOW_PER_SERIES:
            totals[name] = (seconds_for(sample, job) * scale_up, extrapolated)
        else:
            totals[name] = (seconds_for(windows, job), "measured")
        progress(f"timing {len(windows)} series", index + 1, len(jobs) + 1)
    # Each series needs its own selection: the fresh fits make them for the cached ones.
    selections: list[ModelSelection] = []
    start = time.perf_counter()
    for y, season in sample:
        model = Auto(season_length=season).fit(y)
        model.predict(HORIZON)
        selections.append(model.selection_)
    totals[AUTO_FRESH] = ((time.perf_counter() - start) * scale_up, extrapolated)
    cached_jobs = [library_job(Auto.name, selection) for selection in selections]
    start = time.perf_counter()
    for (y, season), job in zip(sample, cached_jobs, strict=True):
        job(y, season)
    totals[AUTO_CACHED] = ((time.perf_counter() - start) * scale_up, extrapolated)
    progress(f"timing {len(windows)} series", len(jobs) + 1, len(jobs) + 1)
    return totals


def speed_rows(
    size: RunSize, loaded: Sequence[tuple[TraceSpec, Sequence[Workload]]]
) -> tuple[list[SpeedRow], int]:
    """Speed per model, and how many series the many-series column covers."""
    nasa_spec, nasa = loaded[0][0], loaded[0][1][0]
    longest = TIMING_LENGTHS[-1]
    slice_end = spread_origins(nasa.observed, longest, 3)[1]
    series = nasa.values[slice_end - longest : slice_end]
    per_series = time_one_series(series, nasa_spec.season or 1, size.timing_budget_seconds)
    sources = [
        (workload, spec.season)
        for spec, workloads in loaded
        for workload in workloads[:1]
        if workload.values.size > TIMING_LENGTHS[0]
    ]
    windows = timing_windows(sources, size.series_count)
    many = time_many_series(windows, per_series, size.slow_series_sample)
    library = [name for name in MODEL_NAMES if name != Auto.name]
    order = [*library, AUTO_CACHED, AUTO_FRESH, *ANCHORS]
    return [SpeedRow(name, tuple(per_series[name]), *many[name]) for name in order], len(windows)
