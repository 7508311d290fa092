"""What the operator-load benchmark computes from what it saw: pure functions and results."""

from __future__ import annotations

import datetime
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np
from prometheus_client.parser import text_string_to_metric_families

# An evaluation is on time up to the sync period + 10 % (and, looser, + 50 %).
ON_TIME = (1.10, 1.50)
HISTOGRAM = "predictive_scaler_reconcile_duration_seconds"
SELECTION_HISTOGRAM = "predictive_scaler_selection_cpu_seconds"
API_COUNTER = "predictive_scaler_api_requests_total"
LATENESS_GAUGE = "predictive_scaler_evaluation_lateness_seconds"
LATE_CONDITION = "EvaluationsLate"
MetricSamples = dict[tuple[str, frozenset[tuple[str, str]]], float]


@dataclass(frozen=True)
class ClassResult:
    kind: str
    objects: int
    sync_seconds: float
    first_evaluation: tuple[float, float]  # seconds from the operator's launch: p50, max
    within: tuple[float, ...]  # share of objects on time, per ON_TIME factor
    steady_within: tuple[float, ...]  # the same, a period after every first evaluation
    gap_seconds: tuple[float, float, float]  # p50, p95, max
    lateness_seconds: tuple[float, float, float] | None  # p50, p95, max; None: not exported
    late: float | None  # share with EvaluationsLate=True; None: not reported
    forecasting: float  # share whose last status carried a forecast
    all_forecasting_after: float  # seconds from the operator's launch; nan: not all did


@dataclass(frozen=True)
class LoadResult:
    objects: int
    mix: float  # the share of expensive objects
    classes: tuple[ClassResult, ...]
    creation_seconds: float
    first_evaluation_seconds: float  # until every object had one; nan: not all within the limit
    evaluations: int
    evaluation_seconds: tuple[float, ...]  # p50, p95, p99
    selections: int | None  # None: the operator exports no selection histogram
    selection_cpu_p50: float
    api_by_kind: Mapping[str, float]  # "verb resource" -> requests per object per cycle
    peak_rss_mib: float
    mean_rss_mib: float
    cpu_cores: float
    processes: int  # the most the operator's tree held at once

    @property
    def api_per_object_cycle(self) -> float | None:
        """None when the operator exports no API request counter."""
        return sum(self.api_by_kind.values()) if self.api_by_kind else None


def parse_metrics(text: str) -> MetricSamples:
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def histogram_quantile(window: MetricSamples, name: str, quantile: float) -> float:
    """From a histogram's bucket deltas, interpolated linearly as Prometheus's function does."""
    buckets = sorted((float(dict(k)["le"]), v) for (n, k), v in window.items() if n == name)
    rank, lower, below = quantile * (buckets[-1][1] if buckets else 0.0), 0.0, 0.0
    for bound, cumulative in buckets if rank > 0 else []:
        if cumulative >= rank:
            # In the +Inf bucket the best answer is its lower edge, the largest finite bound.
            return (
                lower
                if math.isinf(bound)
                else lower + (bound - lower) * (rank - below) / (cumulative - below)
            )
        lower, below = bound, cumulative
    return math.nan


def per_object(metrics: MetricSamples, name: str) -> dict[tuple[str, str], float]:
    """A per-object gauge's values by (namespace, name)."""
    found = {}
    for (metric, labels), value in metrics.items():
        if metric == name:
            by = dict(labels)
            found[(by.get("namespace", ""), by.get("name", ""))] = value
    return found


def evaluated_at(status: Mapping[str, Any]) -> float | None:
    """status.lastEvaluationTime (RFC 3339, whole seconds) in epoch seconds."""
    stamp = status.get("lastEvaluationTime")
    return datetime.datetime.fromisoformat(stamp).timestamp() if stamp else None


def condition_status(status: Mapping[str, Any], kind: str) -> str | None:
    for condition in status.get("conditions") or []:
        if condition.get("type") == kind:
            return str(condition.get("status"))
    return None


def whole_seconds(limit: float) -> int:
    """A limit as evaluation stamps can show it: they are whole seconds, so a gap is
    within ``limit`` when it is at most ``limit`` rounded up to a whole second."""
    return math.ceil(limit - 1e-9)


def gaps_and_shares(
    seen: Mapping[str, set[float]],
    names: Sequence[str],
    window: tuple[float, float],
    limits: Sequence[float],
) -> tuple[list[float], list[float]]:
    """Gaps between each object's evaluations in ``window`` (epoch start, end), and per
    limit the share of ``names`` whose gaps all stay within it.

    The time from an object's last evaluation to the window's end counts as a gap
    once it exceeds the smallest limit: an object that stops being evaluated is
    late, not absent. An object never evaluated has one gap, the whole window.
    The time to a first evaluation is not a gap (see first_evaluations).
    """
    start, end = window[0], math.floor(window[1])
    bounds = [whole_seconds(limit) for limit in limits]
    gaps: list[float] = []
    on_time = [0] * len(limits)
    for name in names:
        times = sorted(seen.get(name, ()))
        if not times:
            own, tail = [], end - start
        else:
            own, tail = [b - a for a, b in pairwise(times)], end - times[-1]
        gaps += own + ([tail] if tail > min(bounds) else [])
        for index, bound in enumerate(bounds):
            on_time[index] += all(gap <= bound for gap in [*own, tail])
    return gaps, [count / max(1, len(names)) for count in on_time]


def since(seen: Mapping[str, set[float]], moment: float) -> dict[str, set[float]]:
    """Each object's evaluations from ``moment`` on, and the last one before it, so the
    gap across ``moment`` still counts."""
    kept: dict[str, set[float]] = {}
    for name, times in seen.items():
        before = [t for t in times if t < moment]
        kept[name] = {t for t in times if t >= moment} | ({max(before)} if before else set())
    return kept


def first_evaluations(
    seen: Mapping[str, set[float]], names: Sequence[str], started: float
) -> tuple[float, float]:
    """p50 and max of the seconds from ``started`` to each object's first evaluation;
    the max is nan while some object has none."""
    waits = [max(0.0, min(seen[n]) - started) for n in names if seen.get(n)]
    if not waits:
        return math.nan, math.nan
    return float(np.median(waits)), max(waits) if len(waits) == len(names) else math.nan


def spread(values: Sequence[float]) -> tuple[float, float, float]:
    """p50, p95 and max; nan when there are none."""
    if not values:
        return math.nan, math.nan, math.nan
    p50, p95 = np.percentile(values, (50, 95))
    return float(p50), float(p95), float(max(values))
