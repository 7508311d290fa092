"""Inputs and single forecasts shared by the forecasting benchmark's accuracy and speed halves.

The traces and how they become workloads, where origins may fall, and one fit+predict of a
library model or a statsforecast anchor, reported as an ``Outcome`` instead of raising.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray
from statsforecast.models import AutoARIMA, AutoETS

from predictive_scaler.forecasting import (
    MODEL_NAMES,
    Auto,
    ModelSelection,
    clean_series,
    make_model,
)
from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.traces import column_values, read_trace

HORIZON = 5
ANCHORS = ("AutoETS", "AutoARIMA")
# statsforecast's ETS keeps at most 24 seasonal states.
ANCHOR_MAX_SEASON = 24
# Zeros lasting this long are the server being down, not a quiet night.
OUTAGE_SECONDS = 3600.0
BoolArray = NDArray[np.bool_]


@dataclass(frozen=True)
class TraceSpec:
    label: str
    file: str
    column: str
    season: int | None
    history: int
    vm_column: str | None = None


TRACES = (
    TraceSpec("NASA", "nasa_http_1995_per_minute.csv.gz", "requests_per_minute", 1440, 1000),
    TraceSpec("Alibaba", "alibaba_2018_cluster_usage_30s.csv.gz", "cpu_util_percent", 2880, 1000),
    TraceSpec("Azure", "azure_2019_vm_usage_5min.csv.gz", "cpu_usage", 288, 1000),
    # 24 h per VM leaves no daily season, and the VMs' autocorrelation shows no hourly one.
    TraceSpec("Google", "google_2011_vm_usage_5min.csv.gz", "cpu_percent", None, 200, "vm"),
)


@dataclass(frozen=True)
class RunSize:
    origins: int
    origins_per_vm: int
    vms: int
    series_count: int
    slow_series_sample: int
    timing_budget_seconds: float


FULL_RUN = RunSize(30, 5, 20, 1000, 100, 1.0)
QUICK_RUN = RunSize(5, 2, 5, 100, 10, 0.2)


@dataclass(frozen=True)
class Workload:
    """One series to forecast: the cleaned values and which of them were really observed."""

    name: str
    values: FloatArray
    observed: BoolArray
    step_seconds: float


@dataclass(frozen=True)
class Outcome:
    """One model's forecast at one origin; ``mean`` is None when the model raised."""

    mean: FloatArray | None
    problem: str = ""
    auto_chose: str = ""


SeriesJob = Callable[[FloatArray, int | None], Outcome]


def anchor_season(season: int | None) -> int:
    return season if season is not None and season <= ANCHOR_MAX_SEASON else 1


def outage_mask(values: FloatArray, step_seconds: float) -> BoolArray:
    """Points inside a run of zeros lasting at least OUTAGE_SECONDS."""
    min_run = math.ceil(OUTAGE_SECONDS / step_seconds)
    zero = np.concatenate([[0], (values == 0.0).astype(np.int8), [0]])
    starts = np.flatnonzero(np.diff(zero) == 1)
    ends = np.flatnonzero(np.diff(zero) == -1)
    mask = np.zeros(values.size, dtype=np.bool_)
    for start, end in zip(starts, ends, strict=True):
        if end - start >= min_run:
            mask[start:end] = True
    return mask


def workload_from(name: str, path: Path, column: str, where: dict[str, str]) -> Workload:
    trace = read_trace(path, column, where=where)
    raw = trace.values.copy()
    observed = np.isfinite(raw) & ~outage_mask(raw, trace.step_seconds)
    raw[~observed] = np.nan
    return Workload(name, clean_series(raw), observed, trace.step_seconds)


def load_workloads(spec: TraceSpec, traces_dir: Path, size: RunSize) -> list[Workload]:
    """The trace as one workload, or ``size.vms`` of its VMs spread over the file."""
    path = traces_dir / spec.file
    if spec.vm_column is None:
        return [workload_from(spec.label, path, spec.column, {})]
    vms = column_values(path, spec.vm_column)
    chosen = vms[:: max(1, len(vms) // size.vms)][: size.vms]
    return [workload_from(vm, path, spec.column, {spec.vm_column: vm}) for vm in chosen]


def spread_origins(observed: BoolArray, history: int, count: int) -> list[int]:
    """``count`` origins spread evenly over those whose history and horizon were all observed."""
    missing = np.concatenate([[0], np.cumsum(~observed)])
    candidates = np.arange(history, observed.size - HORIZON + 1)
    clean = missing[candidates + HORIZON] - missing[candidates - history] == 0
    usable = candidates[clean]
    if usable.size == 0:
        return []
    picks = np.linspace(0, usable.size - 1, min(count, usable.size)).round().astype(int)
    return sorted({int(usable[pick]) for pick in picks})


def run_library_model(
    name: str, train: FloatArray, season: int | None, selection: ModelSelection | None = None
) -> Outcome:
    """Fit and forecast; ``auto`` reuses ``selection`` when given and selects afresh otherwise."""
    try:
        extra = {"selection": selection} if name == Auto.name and selection is not None else {}
        model = make_model(name, season_length=season, **extra)
        forecast = model.fit(train).predict(HORIZON)
    except Exception as error:  # noqa: BLE001 - a failing model is a result to report
        return Outcome(None, f"{type(error).__name__}: {error}")
    problem = model.fallback_reason_ or "; ".join(forecast.notes)
    auto_chose = model.chosen_ if isinstance(model, Auto) else ""
    return Outcome(np.asarray(forecast.mean), problem, auto_chose)


def anchor_forecast(name: str, train: FloatArray, season: int) -> FloatArray:
    model = AutoETS(season_length=season) if name == "AutoETS" else AutoARIMA(season_length=season)
    mean = np.asarray(model.forecast(y=train, h=HORIZON)["mean"], dtype=np.float64)
    if not np.isfinite(mean).all():
        raise FloatingPointError("non-finite forecast")
    # Loads cannot be negative; the library clips its forecasts the same way.
    return np.clip(mean, 0.0, None)


def run_anchor(name: str, train: FloatArray, season: int) -> Outcome:
    try:
        return Outcome(anchor_forecast(name, train, season))
    except Exception as error:  # noqa: BLE001 - a failing anchor is a result to report
        return Outcome(None, f"{type(error).__name__}: {error}")


def library_job(name: str, selection: ModelSelection | None = None) -> SeriesJob:
    return lambda y, season: run_library_model(name, y, season, selection)


def anchor_job(name: str) -> SeriesJob:
    return lambda y, season: run_anchor(name, y, anchor_season(season))


def model_jobs(selection: ModelSelection | None = None) -> dict[str, SeriesJob]:
    """Every library model, then every anchor, in report order; ``auto`` reuses ``selection``."""
    jobs = {name: library_job(name, selection) for name in MODEL_NAMES}
    return jobs | {name: anchor_job(name) for name in ANCHORS}
