"""The forecasting benchmark's accuracy half: rolling-origin MASE per trace and model.

Every library model and both statsforecast anchors are refitted at each origin and scored
against the following ``HORIZON`` points, then averaged per model into ``AccuracyRow``s.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from benchmarks.forecast_runs import (
    HORIZON,
    Outcome,
    RunSize,
    TraceSpec,
    Workload,
    model_jobs,
    spread_origins,
)
from benchmarks.report import progress
from predictive_scaler.forecasting import ModelSelection, select_model
from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.forecasting.metrics import mase, naive_scale, under_forecast_share

SCORED_HORIZONS = (1, 2, 5)
# The operator refreshes auto's selection on a schedule and refits with it in between; at each
# origin auto uses a selection made this many steps earlier, the oldest one an hourly refresh
# leaves at NASA's minute steps.
SELECTION_AGE_STEPS = 60


@dataclass(frozen=True)
class OriginScore:
    model: str
    mase: tuple[float, ...]
    under_share: tuple[float, ...]
    problem: str
    auto_chose: str


@dataclass(frozen=True)
class AccuracyRow:
    trace: str
    model: str
    mase: tuple[float, ...]
    ratio_to_seasonal_naive: tuple[float, ...]
    under_share: tuple[float, ...]
    scored: int
    problems: int
    first_problem: str


@dataclass(frozen=True)
class TraceResult:
    spec: TraceSpec
    points: int
    step_seconds: float
    workloads: int
    origins: int
    rows: tuple[AccuracyRow, ...]
    auto_choices: tuple[tuple[str, int], ...]


def score(name: str, outcome: Outcome, actual: FloatArray, scale: float) -> OriginScore:
    if outcome.mean is None:
        nan = (math.nan,) * len(SCORED_HORIZONS)
        return OriginScore(name, nan, nan, outcome.problem, "")
    mean = outcome.mean
    return OriginScore(
        name,
        tuple(mase(actual[:h], mean[:h], scale) for h in SCORED_HORIZONS),
        tuple(under_forecast_share(actual[:h], mean[:h]) for h in SCORED_HORIZONS),
        outcome.problem,
        outcome.auto_chose,
    )


def evaluate_workload(
    spec: TraceSpec, workload: Workload, origins: Sequence[int], on_origin: Callable[[], None]
) -> list[OriginScore]:
    scores: list[OriginScore] = []
    for origin in origins:
        train = workload.values[origin - spec.history : origin]
        actual = workload.values[origin : origin + HORIZON]
        selected_at = origin - SELECTION_AGE_STEPS
        earlier = workload.values[max(0, selected_at - spec.history) : selected_at]
        selection: ModelSelection | None
        try:
            selection = select_model(earlier, horizon=HORIZON, season_length=spec.season)
        except Exception:  # noqa: BLE001 - auto then selects inside fit and reports why
            selection = None
        scale = naive_scale(train, spec.season or 1)
        for name, job in model_jobs(selection).items():
            scores.append(score(name, job(train, spec.season), actual, scale))
        on_origin()
    return scores


def column_means(values: FloatArray) -> FloatArray:
    if values.shape[0] == 0:
        return np.full(len(SCORED_HORIZONS), math.nan)
    return np.asarray(values.mean(axis=0), dtype=np.float64)


def as_floats(values: FloatArray) -> tuple[float, ...]:
    return tuple(float(value) for value in values)


def accuracy_rows(trace: str, scores: Sequence[OriginScore]) -> tuple[AccuracyRow, ...]:
    by_model: dict[str, list[OriginScore]] = {}
    for origin_score in scores:
        by_model.setdefault(origin_score.model, []).append(origin_score)
    baseline = np.array([s.mase for s in by_model["seasonal_naive"]])
    rows = []
    for name, model_scores in by_model.items():
        errors = np.array([s.mase for s in model_scores])
        # Every origin a model failed at is left out of its mean and of its baseline's.
        scored = ~np.isnan(errors[:, 0])
        model_mase = column_means(errors[scored])
        under = column_means(np.array([s.under_share for s in model_scores])[scored])
        problems = [s.problem for s in model_scores if s.problem]
        rows.append(
            AccuracyRow(
                trace,
                name,
                as_floats(model_mase),
                as_floats(model_mase / column_means(baseline[scored])),
                as_floats(under),
                int(scored.sum()),
                len(problems),
                problems[0] if problems else "",
            )
        )
    return tuple(rows)


def evaluate_trace(spec: TraceSpec, workloads: Sequence[Workload], size: RunSize) -> TraceResult:
    per_workload = size.origins if spec.vm_column is None else size.origins_per_vm
    plans = [(w, spread_origins(w.observed, spec.history, per_workload)) for w in workloads]
    total = sum(len(origins) for _, origins in plans)
    done = 0

    def on_origin() -> None:
        nonlocal done
        done += 1
        progress(f"accuracy {spec.label}", done, total)

    scores: list[OriginScore] = []
    for workload, origins in plans:
        scores += evaluate_workload(spec, workload, origins, on_origin)
    choices = Counter(s.auto_chose for s in scores if s.auto_chose)
    return TraceResult(
        spec,
        sum(w.values.size for w in workloads),
        workloads[0].step_seconds,
        len(workloads),
        total,
        accuracy_rows(spec.label, scores),
        tuple(choices.most_common()),
    )
