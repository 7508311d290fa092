"""The forecasting benchmark's coverage half: ``auto`` walking forward as the operator runs it.

One ScheduledSelection per walk is given the recent window and the long history at each of
WALK_WARMUP + WALK_SCORED consecutive steps: it selects afresh every hour (its default
refresh), only updates in between, and takes its band from the errors of the forecasts it
really made once it has enough of them (``LiveErrors``). The scored steps say how often the
load lay in the 90 % band, how wide the band was, and what each call cost.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from benchmarks.forecast_runs import (
    HORIZON,
    LEVEL,
    RunSize,
    TraceSpec,
    Workload,
    histories_at,
    long_history,
    origins_for,
    recent_window,
)
from benchmarks.forecasting_accuracy import SCORED_HORIZONS
from benchmarks.report import progress
from predictive_scaler.forecasting import Auto, ScheduledSelection
from predictive_scaler.forecasting.calibration import MIN_ERRORS

# Steps before scoring starts: the live errors fill (MIN_ERRORS rows take MIN_ERRORS +
# HORIZON - 1 steps) and the first hourly re-selection has been made at 1-minute steps.
WALK_WARMUP = 60
WALK_SCORED = 120


@dataclass
class WalkRecord:
    """What the scored steps of a trace's walks gave, forecast by forecast."""

    inside: list[list[bool]] = field(default_factory=list)
    below_upper: list[list[bool]] = field(default_factory=list)
    scaled_errors: list[list[float]] = field(default_factory=list)
    width: float = 0.0
    load: float = 0.0
    calibrated: int = 0
    fresh_seconds: list[float] = field(default_factory=list)
    update_seconds: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class WalkResult:
    trace: str
    walks: int
    forecasts: int
    coverage: float  # share of forecast steps whose load lay in the band, steps 1..HORIZON
    # Its standard error over the walks: steps within a walk are correlated, walks are
    # apart, so the spread of the walks' own coverages is what says how sure the figure is.
    coverage_error: float
    coverage_by_step: tuple[float, ...]  # the same at each step ahead
    below_upper: float  # share of forecast steps whose load was at most the upper bound
    width: float  # mean band width over mean load
    mase: tuple[float, ...]  # per SCORED_HORIZONS, scaled as in the accuracy half
    calibrated: float  # share of scored forecasts whose band came from live errors
    fresh_seconds: tuple[float, ...]
    update_seconds: tuple[float, ...]


def walk(workload: Workload, start: int, record: WalkRecord) -> None:
    """Forecast at every step from ``start`` on, scoring those after the warm-up."""
    forecaster = ScheduledSelection(Auto.name)
    scale = histories_at(workload, start).scale
    for step in range(WALK_WARMUP + WALK_SCORED):
        origin = start + step
        now = origin * workload.step_seconds
        recent, long = recent_window(workload, origin), long_history(workload, origin)
        began = time.process_time()
        forecast = forecaster.forecast_series(recent, HORIZON, LEVEL, now, long=long)
        seconds = time.process_time() - began
        fresh = forecaster.fitted_at == now
        (record.fresh_seconds if fresh else record.update_seconds).append(seconds)
        if step < WALK_WARMUP:
            continue
        actual = workload.values[origin : origin + HORIZON]
        record.inside.append(list((forecast.lower <= actual) & (actual <= forecast.upper)))
        record.below_upper.append(list(actual <= forecast.upper))
        record.scaled_errors.append(list(np.abs(actual - forecast.mean) / scale))
        record.width += float(np.sum(forecast.upper - forecast.lower))
        record.load += float(np.sum(actual))
        record.calibrated += len(forecaster.live_errors) >= MIN_ERRORS


def walk_starts(
    spec: TraceSpec, workloads: Sequence[Workload], size: RunSize
) -> list[tuple[Workload, int]]:
    """Where the walks start: spread over the trace, or one on each of a few VMs."""
    ahead = WALK_WARMUP + WALK_SCORED - 1 + HORIZON
    if spec.vm_column is None:
        return [
            (workloads[0], start) for start in origins_for(spec, workloads[0], size.walks, ahead)
        ]
    chosen = workloads[:: max(1, len(workloads) // size.walk_vms)][: size.walk_vms]
    return [(w, starts[0]) for w in chosen if (starts := origins_for(spec, w, 1, ahead))]


def walk_standard_error(inside: NDArray[np.bool_], walks: int) -> float:
    """The standard error of the coverage over ``walks`` walks of WALK_SCORED forecasts each."""
    if walks < 2 or inside.shape[0] != walks * WALK_SCORED:
        return math.nan
    per_walk = inside.reshape(walks, -1).mean(axis=1)
    return float(per_walk.std(ddof=1) / math.sqrt(walks))


def evaluate_walks(spec: TraceSpec, workloads: Sequence[Workload], size: RunSize) -> WalkResult:
    starts = walk_starts(spec, workloads, size)
    record = WalkRecord()
    for index, (workload, start) in enumerate(starts):
        walk(workload, start, record)
        progress(f"walks {spec.label}", index + 1, len(starts))
    inside = np.array(record.inside, dtype=np.bool_)
    errors = np.array(record.scaled_errors)
    forecasts = inside.shape[0]
    return WalkResult(
        spec.label,
        len(starts),
        forecasts,
        float(inside.mean()) if forecasts else math.nan,
        walk_standard_error(inside, len(starts)),
        tuple(float(share) for share in inside.mean(axis=0)) if forecasts else (),
        float(np.mean(record.below_upper)) if forecasts else math.nan,
        record.width / record.load if record.load > 0 else math.nan,
        tuple(
            float(errors[:, :h].mean(axis=1).mean()) if forecasts else math.nan
            for h in SCORED_HORIZONS
        ),
        record.calibrated / forecasts if forecasts else math.nan,
        tuple(record.fresh_seconds),
        tuple(record.update_seconds),
    )
