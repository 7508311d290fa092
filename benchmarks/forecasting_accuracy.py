"""The forecasting benchmark's accuracy half: rolling-origin MASE, worst origins and bands.

At each origin every library model, ``auto`` (the operator's path, both histories) and the
four statsforecast anchors forecast HORIZON steps with a 90 % band from the same histories;
each is scored against what followed and summarised per model into an ``AccuracyRow``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from statistics import median

import numpy as np

from benchmarks.forecast_jobs import ANCHORS, Outcome, model_jobs
from benchmarks.forecast_runs import (
    HORIZON,
    RECENT_SECONDS,
    Histories,
    RunSize,
    TraceSpec,
    Workload,
    cold_start,
    histories_at,
    origins_for,
)
from benchmarks.report import progress
from predictive_scaler.forecasting import Auto
from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.forecasting.metrics import mase

SCORED_HORIZONS = (1, 2, 5)
# In a new workload's first two weeks: auto, the baselines and the anchors (every library
# model would double the run for rows nobody compares there).
COLD_START_MODELS = ("naive", "seasonal_naive", Auto.name)
WORST_QUANTILE = 0.95
# A reference, not a contender: the equal-weight mean of the anchors' forecasts at each
# origin. Where even it is behind the best single anchor, the target "at or below the best
# anchor at every horizon" asks for more than combining the anchors themselves gives.
ANCHORS_MEAN = "anchors' mean"
# The paired comparison of two models: a 95 % percentile interval from this many cluster
# bootstrap resamples of the origins, seeded so that a rerun on the same scores agrees.
GAP_CONFIDENCE = 0.95
GAP_RESAMPLES = 4000
GAP_SEED = 0


@dataclass(frozen=True)
class OriginScore:
    model: str
    mase: tuple[float, ...]  # per SCORED_HORIZONS; NaN when the model raised
    inside: int  # steps whose load lay in the band
    steps: int
    width: float  # summed band width over the steps
    load: float  # summed load over the steps
    seconds: float
    problem: str
    auto_chose: str


@dataclass(frozen=True)
class AccuracyRow:
    trace: str
    model: str
    mase: tuple[float, ...]
    ratio_to_seasonal_naive: tuple[float, ...]
    p95: tuple[float, ...]  # per-origin MASE's 95th percentile
    worst: tuple[float, ...]  # and its maximum: the worst origin
    coverage: float  # share of forecast steps whose load lay in the 90 % band
    width: float  # mean band width over mean load
    seconds: float  # median time per fit+forecast
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
    recent_points: int
    long_points: tuple[int, int]  # fewest and most 5-minute points of long history
    seasons: tuple[tuple[str, int], ...]  # seasons found at the origins, and how often
    rows: tuple[AccuracyRow, ...]
    auto_choices: tuple[tuple[str, int], ...]
    # Per model, its MASE at every origin (rows, in origin order) and SCORED_HORIZONS
    # (columns), NaN where it raised; and each origin's cluster for the paired comparison.
    per_origin: dict[str, FloatArray]
    clusters: tuple[int, ...]


@dataclass(frozen=True)
class Gap:
    """One model's mean MASE minus another's over the origins both scored, and its interval."""

    mean: float
    low: float
    high: float

    @property
    def beyond_noise(self) -> bool:
        """Whether the interval lies wholly above zero: the first model is really behind."""
        return self.low > 0.0


def paired_gap(first: FloatArray, second: FloatArray, clusters: Sequence[int]) -> Gap:
    """``first - second`` averaged over the origins both scored, with a bootstrap interval.

    The two models are scored at the same origins, so their difference is compared origin
    by origin: what one origin's load does to both cancels. Origins are resampled a cluster
    at a time (a Google VM's three origins share the VM; elsewhere each origin is its own
    cluster, spread over days), which keeps their correlation in the interval.
    """
    both = np.isfinite(first) & np.isfinite(second)
    if not both.any():
        return Gap(math.nan, math.nan, math.nan)
    difference = (first - second)[both]
    picked = np.asarray(clusters)[both].tolist()
    means = resampled_means(difference, picked, np.random.default_rng(GAP_SEED))
    tail = (1.0 - GAP_CONFIDENCE) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return Gap(float(difference.mean()), float(low), float(high))


def resampled_means(
    values: FloatArray, clusters: Sequence[int], rng: np.random.Generator
) -> FloatArray:
    """The mean of ``values`` (one row per origin) in each of GAP_RESAMPLES draws of the
    origins, a cluster at a time: shape (GAP_RESAMPLES, *values.shape[1:]).

    Every column is drawn alike, so comparisons between columns within a draw stay paired.
    """
    _, cluster_of = np.unique(np.asarray(clusters), return_inverse=True)
    n_clusters = int(cluster_of.max()) + 1
    columns = values.reshape(len(cluster_of), -1)
    sums = np.stack(
        [np.bincount(cluster_of, weights=column, minlength=n_clusters) for column in columns.T],
        axis=1,
    )
    counts = np.bincount(cluster_of, minlength=n_clusters).astype(np.float64)
    drawn = rng.integers(0, n_clusters, size=(GAP_RESAMPLES, n_clusters))
    means = sums[drawn].sum(axis=1) / counts[drawn].sum(axis=1)[:, None]
    return np.asarray(means.reshape((GAP_RESAMPLES, *values.shape[1:])), dtype=np.float64)


def score(name: str, outcome: Outcome, actual: FloatArray, scale: float) -> OriginScore:
    if outcome.mean is None or outcome.lower is None or outcome.upper is None:
        nan = (math.nan,) * len(SCORED_HORIZONS)
        return OriginScore(name, nan, 0, 0, 0.0, 0.0, outcome.seconds, outcome.problem, "")
    inside = (outcome.lower <= actual) & (actual <= outcome.upper)
    return OriginScore(
        name,
        tuple(mase(actual[:h], outcome.mean[:h], scale) for h in SCORED_HORIZONS),
        int(inside.sum()),
        actual.size,
        float(np.sum(outcome.upper - outcome.lower)),
        float(np.sum(actual)),
        outcome.seconds,
        outcome.problem,
        outcome.auto_chose,
    )


def season_label(histories: Histories, step_seconds: float) -> str:
    names = {86_400.0: "day", 604_800.0: "week"}
    found = [names.get(s * step_seconds, f"{s * step_seconds:g} s") for s in histories.seasons]
    return " + ".join(found) or "none"


def evaluate_workload(
    workload: Workload,
    origins: Sequence[int],
    on_origin: Callable[[Histories], None],
    models: Collection[str] | None = None,
) -> list[OriginScore]:
    """Every model (or those of ``models``, with the anchors) scored at each origin in turn:
    the scores of one origin, then the next."""
    scores: list[OriginScore] = []
    jobs = {
        name: job
        for name, job in model_jobs().items()
        if models is None or name in models or name in ANCHORS
    }
    for origin in origins:
        histories = histories_at(workload, origin)
        actual = workload.values[origin : origin + HORIZON]
        outcomes = {name: job(histories) for name, job in jobs.items()}
        outcomes[ANCHORS_MEAN] = mean_outcome([outcomes[name] for name in ANCHORS])
        scores += [score(name, out, actual, histories.scale) for name, out in outcomes.items()]
        on_origin(histories)
    return scores


def mean_outcome(outcomes: Sequence[Outcome]) -> Outcome:
    """The equal-weight mean of forecasts and of their bounds; failed when one of them failed."""
    seconds = sum(outcome.seconds for outcome in outcomes)
    failed = [outcome.problem for outcome in outcomes if outcome.mean is None]
    if failed:
        return Outcome(None, None, None, seconds, failed[0])
    means, lowers, uppers = (
        np.mean([getattr(outcome, part) for outcome in outcomes], axis=0)
        for part in ("mean", "lower", "upper")
    )
    return Outcome(means, lowers, uppers, seconds)


def column_stat(values: FloatArray, stat: Callable[[FloatArray], FloatArray]) -> FloatArray:
    if values.shape[0] == 0:
        return np.full(len(SCORED_HORIZONS), math.nan)
    return np.asarray(stat(values), dtype=np.float64)


def as_floats(values: FloatArray) -> tuple[float, ...]:
    return tuple(float(value) for value in values)


def scores_by_model(scores: Sequence[OriginScore]) -> dict[str, list[OriginScore]]:
    """Each model's scores, in origin order."""
    by_model: dict[str, list[OriginScore]] = {}
    for origin_score in scores:
        by_model.setdefault(origin_score.model, []).append(origin_score)
    return by_model


def accuracy_rows(trace: str, scores: Sequence[OriginScore]) -> tuple[AccuracyRow, ...]:
    by_model = scores_by_model(scores)
    baseline = np.array([s.mase for s in by_model["seasonal_naive"]])
    rows = []
    for name, model_scores in by_model.items():
        errors = np.array([s.mase for s in model_scores])
        # Every origin a model failed at is left out of its figures and of its baseline's.
        scored = ~np.isnan(errors[:, 0])
        model_mase = column_stat(errors[scored], lambda v: v.mean(axis=0))
        steps = sum(s.steps for s in model_scores)
        load = sum(s.load for s in model_scores)
        problems = [s.problem for s in model_scores if s.problem]
        rows.append(
            AccuracyRow(
                trace,
                name,
                as_floats(model_mase),
                as_floats(model_mase / column_stat(baseline[scored], lambda v: v.mean(axis=0))),
                as_floats(
                    column_stat(errors[scored], lambda v: np.quantile(v, WORST_QUANTILE, axis=0))
                ),
                as_floats(column_stat(errors[scored], lambda v: v.max(axis=0))),
                sum(s.inside for s in model_scores) / steps if steps else math.nan,
                sum(s.width for s in model_scores) / load if load > 0 else math.nan,
                median(s.seconds for s in model_scores),
                int(scored.sum()),
                len(problems),
                problems[0] if problems else "",
            )
        )
    return tuple(rows)


def evaluate_trace(
    spec: TraceSpec,
    workloads: Sequence[Workload],
    size: RunSize,
    *,
    per_workload: int | None = None,
    models: Collection[str] | None = None,
) -> TraceResult:
    if per_workload is None:
        per_workload = size.origins if spec.vm_column is None else size.origins_per_vm
    plans = [(w, origins_for(spec, w, per_workload)) for w in workloads]
    total = sum(len(origins) for _, origins in plans)
    done = 0
    seasons: Counter[str] = Counter()
    long_points: list[int] = []

    def on_origin(histories: Histories) -> None:
        nonlocal done
        done += 1
        seasons[season_label(histories, workloads[0].step_seconds)] += 1
        long_points.append(histories.long.values.size)
        progress(f"accuracy {spec.label}", done, total)

    scores: list[OriginScore] = []
    clusters: list[int] = []
    for index, (workload, origins) in enumerate(plans):
        scores += evaluate_workload(workload, origins, on_origin, models)
        first = len(clusters)
        # A Google VM's origins share the VM; elsewhere each origin is its own cluster.
        clusters += [index] * len(origins) if spec.vm_column else range(first, first + len(origins))
    choices = Counter(s.auto_chose for s in scores if s.auto_chose)
    return TraceResult(
        spec,
        sum(w.values.size for w in workloads),
        workloads[0].step_seconds,
        len(workloads),
        total,
        workloads[0].steps(RECENT_SECONDS),
        (min(long_points), max(long_points)),
        tuple(seasons.most_common()),
        accuracy_rows(spec.label, scores),
        tuple(choices.most_common()),
        per_origin_mase(scores),
        tuple(clusters),
    )


def per_origin_mase(scores: Sequence[OriginScore]) -> dict[str, FloatArray]:
    return {
        name: np.array([s.mase for s in model_scores], dtype=np.float64)
        for name, model_scores in scores_by_model(scores).items()
    }


def evaluate_cold_starts(
    loaded: Sequence[tuple[TraceSpec, Sequence[Workload]]], size: RunSize
) -> list[TraceResult]:
    """Auto, the baselines and the anchors on every trace with a new workload's two weeks."""
    results = []
    for spec, workloads in loaded:
        cut = cold_start(spec, workloads[0])
        if cut is not None:
            cold_spec, workload = cut
            results.append(
                evaluate_trace(
                    cold_spec,
                    [workload],
                    size,
                    per_workload=size.cold_origins,
                    models=COLD_START_MODELS,
                )
            )
    return results
