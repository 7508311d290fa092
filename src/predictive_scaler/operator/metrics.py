"""The operator's own Prometheus metrics, served on its metrics port.

Per-object series carry `namespace` and `name`; they are removed when the
object is deleted so a long-running operator does not keep dead series.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections.abc import Iterator

from prometheus_client import Counter, Gauge, Histogram, disable_created_metrics

from predictive_scaler.operator.conditions import TYPES
from predictive_scaler.rebalancing.planner import Plan
from predictive_scaler.simulation.tallies import SIDES, WINDOWS

# A `_created` series per counter and histogram is a ninth of the exposition at
# 1,000 objects (2,050 of 18,194 lines), the operator's dearest request; no
# dashboard or alert reads them.
disable_created_metrics()  # type: ignore[no-untyped-call]

OBJECT = ("namespace", "name")

LOAD = Gauge("predictive_scaler_load", "Newest load sample, in the metric's unit", OBJECT)
FORECAST = Gauge(
    "predictive_scaler_forecast",
    "Forecast load the decision sized for (mean, lower and upper of the interval)",
    (*OBJECT, "bound"),
)
REPLICAS = Gauge(
    "predictive_scaler_replicas",
    "Replicas of the target: current (spec), ready (status), desired (this decision), and "
    "shadow_hpa (what the HPA would run on the same load)",
    (*OBJECT, "kind"),
)
REPLICA_MINUTES = Gauge(
    "predictive_scaler_replica_minutes",
    "Replica-minutes over a rolling window: predictive (as the workload ran), replayed (the "
    "forecast's decisions through the replay model) and hpa (the shadow HPA)",
    (*OBJECT, "scaler", "window"),
)
OVERLOAD_MINUTES = Gauge(
    "predictive_scaler_overload_minutes",
    "Minutes the load exceeded what ready pods serve, over a rolling window, per scaler",
    (*OBJECT, "scaler", "window"),
)
FORECAST_COVERAGE = Gauge(
    "predictive_scaler_forecast_coverage",
    "Share of the lead-time forecasts that came due within the window inside their interval",
    (*OBJECT, "window"),
)
FORECAST_ERROR = Gauge(
    "predictive_scaler_forecast_error",
    "Mean absolute scaled error of the lead-time forecasts that came due within the window",
    (*OBJECT, "window"),
)
TARGET_PER_REPLICA = Gauge(
    "predictive_scaler_target_per_replica",
    "Load one replica is sized for (spec.metric.targetPerReplica, or capacityPerReplica "
    "with an overload budget), in the metric's unit",
    OBJECT,
)
OVERLOAD_BUDGET = Gauge(
    "predictive_scaler_overload_budget_ratio",
    "Share of time the load may exceed what ready pods serve (spec.scaling.overloadBudget)",
    OBJECT,
)
OVERLOAD_REALISED = Gauge(
    "predictive_scaler_overload_realised_ratio",
    "Share of the last day's load samples that exceeded what ready pods served",
    OBJECT,
)
OVERLOAD_BEYOND_CEILING = Gauge(
    "predictive_scaler_overload_beyond_ceiling_ratio",
    "Share of the last day's load samples overloaded beyond what the highest forecast "
    "quantile would have provisioned: overload no budget buys off",
    OBJECT,
)
FORECAST_QUANTILE = Gauge(
    "predictive_scaler_forecast_quantile",
    "Forecast quantile the replicas are sized for, steered to keep the overload budget",
    OBJECT,
)
MODEL = Gauge(
    "predictive_scaler_model_info", "The forecasting model in use (value 1)", (*OBJECT, "model")
)
BACKTEST_ERROR = Gauge(
    "predictive_scaler_backtest_error",
    "Mean absolute scaled error of the chosen model in its last backtest selection",
    OBJECT,
)
CONDITION = Gauge(
    "predictive_scaler_condition",
    "1 when the condition is True, 0 when False, -1 when Unknown",
    (*OBJECT, "condition"),
)
SCALE_ACTIONS = Counter(
    "predictive_scaler_scale_actions", "Replica changes patched on targets", (*OBJECT, "direction")
)
RECONCILE_SECONDS = Histogram(
    "predictive_scaler_reconcile_duration_seconds",
    "Time one evaluation of an object took",
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
LATENESS = Gauge(
    "predictive_scaler_evaluation_lateness_seconds",
    "How late the object's last evaluation started against its syncPeriod",
    OBJECT,
)
LANES = ("evaluation", "selection")
QUEUE_WAIT = Histogram(
    "predictive_scaler_queue_wait_seconds",
    "Time from queueing to a worker, per lane (evaluation: threads; selection: processes)",
    ("lane",),
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300),
)
QUEUED = Gauge("predictive_scaler_queued", "Work waiting for a worker, per lane", ("lane",))
SELECTION_CPU_SECONDS = Histogram(
    "predictive_scaler_selection_cpu_seconds",
    "CPU time one model selection (and its fit) took in a selection worker",
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
)
SELECTION_WORKERS_MEMORY = Gauge(
    "predictive_scaler_selection_workers_resident_memory_bytes",
    "Resident memory of the model-selection worker processes together "
    "(process_resident_memory_bytes is the operator's main process alone)",
)
SELECTIONS_OVER_BUDGET = Counter(
    "predictive_scaler_selections_over_budget",
    "Selections stopped by their CPU budget, which kept the best model scored so far",
)
SELECTIONS_ON_BREAK = Counter(
    "predictive_scaler_selections_on_break",
    "Selections asked for ahead of their refresh because the load left the forecast's band",
)
LEADER = Gauge(
    "predictive_scaler_leader",
    "1 while this replica acts (holds the Lease, or runs without leader election), 0 on standby",
)
API_REQUESTS = Counter(
    "predictive_scaler_api_requests",
    "Requests this operator's own client sent to the Kubernetes API (kopf's watches excluded)",
    ("verb", "resource"),
)
RECONCILE_ERRORS = Counter(
    "predictive_scaler_reconcile_errors",
    "Turns of a loop (evaluate: one object; rebalance: one cycle) that raised; details in the log",
    ("loop",),
)
REBALANCE_SECONDS = Histogram(
    "predictive_scaler_rebalance_duration_seconds",
    "Time one rebalancing cycle took, failed cycles included (its count is the cycles run)",
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
)
QUERY_SECONDS = Histogram(
    "predictive_scaler_prometheus_query_duration_seconds",
    "Latency of Prometheus queries (load histories and the rebalancer's usage)",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
HISTORY_POINTS_READ = Counter(
    "predictive_scaler_history_points_read",
    "Samples asked of Prometheus for the load histories (recent, long); each window is read "
    "whole once per object, then only its new samples",
    ("window",),
)
QUERY_FAILURES = Counter(
    "predictive_scaler_prometheus_query_failures", "Failed Prometheus queries", ("reason",)
)
METRICS_API_FAILURES = Counter(
    "predictive_scaler_metrics_api_failures",
    "Failed requests to metrics.k8s.io (with the metrics-api source)",
    ("reason",),
)

NODE_SCORE = Gauge(
    "predictive_scaler_node_score",
    "Rebalancing score of a node: log of cluster mean over its utilisation (< 0 heavier)",
    ("node",),
)
NODE_HEAP = Gauge(
    "predictive_scaler_node_heap", "1 when the node is in that load heap", ("node", "heap")
)
BALANCE_DEGREE = Gauge(
    "predictive_scaler_balance_degree", "Standard deviation of the node scores (0 is even)"
)
MOVES = Counter("predictive_scaler_rebalance_moves", "Moves planned by the rebalancer")
EVICTIONS = Counter("predictive_scaler_evictions", "Rebalancing evictions by outcome", ("reason",))

_WINDOWS = tuple((window.name,) for window in WINDOWS)
BOUNDS = ("mean", "lower", "upper")
_SCALER_WINDOWS = tuple((side, window.name) for side in SIDES for window in WINDOWS)
_KNOWN_LABELS: dict[Gauge | Counter, tuple[tuple[str, ...], ...]] = {
    LOAD: ((),),
    LATENESS: ((),),
    BACKTEST_ERROR: ((),),
    TARGET_PER_REPLICA: ((),),
    OVERLOAD_BUDGET: ((),),
    OVERLOAD_REALISED: ((),),
    OVERLOAD_BEYOND_CEILING: ((),),
    FORECAST_QUANTILE: ((),),
    FORECAST: tuple((bound,) for bound in BOUNDS),
    REPLICAS: (("current",), ("ready",), ("desired",), ("shadow_hpa",)),
    SCALE_ACTIONS: (("up",), ("down",)),
    REPLICA_MINUTES: _SCALER_WINDOWS,
    OVERLOAD_MINUTES: _SCALER_WINDOWS,
    FORECAST_COVERAGE: _WINDOWS,
    FORECAST_ERROR: _WINDOWS,
}
# Counters whose label values are known up front start at zero, so a rate()
# on a dashboard answers 0 instead of nothing before the first error.
LOOPS = ("evaluate", "rebalance", "selection")
QUERY_FAILURE_REASONS = ("Unreachable", "Timeout", "QueryFailed", "MultipleSeries")
EVICTION_OUTCOMES = ("Evicted", "Blocked", "Failed")
for _loop in LOOPS:
    RECONCILE_ERRORS.labels(_loop)
for _reason in QUERY_FAILURE_REASONS:
    QUERY_FAILURES.labels(_reason)
METRICS_API_FAILURE_REASONS = ("Unreachable", "Timeout", "QueryFailed")
for _reason in METRICS_API_FAILURE_REASONS:
    METRICS_API_FAILURES.labels(_reason)
for _lane in LANES:
    QUEUED.labels(_lane)
    QUEUE_WAIT.labels(_lane)
for _window in ("recent", "long"):
    HISTORY_POINTS_READ.labels(_window)
for _outcome in EVICTION_OUTCOMES:
    EVICTIONS.labels(_outcome)
# The model label of each object, so a change of model (or a deletion) drops the old series.
_models: dict[tuple[str, str], str] = {}


def set_model(namespace: str, name: str, model: str) -> None:
    previous = _models.get((namespace, name))
    if previous is not None and previous != model:
        MODEL.remove(namespace, name, previous)
    _models[(namespace, name)] = model
    MODEL.labels(namespace, name, model).set(1)


# Which incarnation of each object is served, so that an evaluation still
# running when its object was deleted cannot put its series back (issue 23):
# publishing and forgetting hold the same lock.
_served: dict[tuple[str, str], int] = {}
_serving = threading.Lock()
_incarnations = itertools.count(1)


def start_object(namespace: str, name: str) -> int:
    """Serve a new object; its token guards its publications. Scale actions start at zero."""
    token = next(_incarnations)
    with _serving:
        _served[namespace, name] = token
        for direction in ("up", "down"):
            SCALE_ACTIONS.labels(namespace, name, direction)
    return token


@contextlib.contextmanager
def publishing(namespace: str, name: str, token: int | None) -> Iterator[bool]:
    """Whether the object is still served (``token`` None: not guarded); hold it to publish."""
    with _serving:
        yield token is None or _served.get((namespace, name)) == token


def scale_action(namespace: str, name: str, direction: str) -> None:
    SCALE_ACTIONS.labels(namespace, name, direction).inc()


def forget(namespace: str, name: str, token: int | None = None) -> None:
    """Drop every series of a deleted object (unless a newer one of its name is served)."""
    with _serving:
        if token is not None and _served.get((namespace, name)) not in (token, None):
            return
        _served.pop((namespace, name), None)
        _drop(namespace, name)


def withdraw(metric: Gauge | Counter, namespace: str, name: str, *labels: str) -> None:
    """Drop one object's series that no longer says anything true (kept, it would freeze
    at its last value); nothing when there is none."""
    with contextlib.suppress(KeyError):
        metric.remove(namespace, name, *labels)


def withdraw_forecast(namespace: str, name: str) -> None:
    """No forecast was made this time (a hold, a blocked object): its bounds go."""
    for bound in BOUNDS:
        withdraw(FORECAST, namespace, name, bound)


def withdraw_decision(namespace: str, name: str) -> None:
    """An object not evaluated this time (blocked) has no load, forecast or replica counts:
    its target was not read (or is gone)."""
    withdraw(LOAD, namespace, name)
    withdraw_forecast(namespace, name)
    for kind in ("current", "ready", "desired"):
        withdraw(REPLICAS, namespace, name, kind)


def _drop(namespace: str, name: str) -> None:
    for metric, label_sets in _KNOWN_LABELS.items():
        for extra in label_sets:
            withdraw(metric, namespace, name, *extra)
    for condition in TYPES:
        with contextlib.suppress(KeyError):
            CONDITION.remove(namespace, name, condition)
    model = _models.pop((namespace, name), None)
    if model is not None:
        MODEL.remove(namespace, name, model)


def publish_balance(plan: Plan, threshold: float) -> None:
    """Scores, heap membership and degree as they stand before this cycle's moves."""
    BALANCE_DEGREE.set(plan.degree_before)
    MOVES.inc(len(plan.moves))
    for node, score in plan.scores_before.items():
        NODE_SCORE.labels(node).set(score)
        hot = score < threshold
        NODE_HEAP.labels(node, "high").set(1 if hot else 0)
        NODE_HEAP.labels(node, "low").set(0 if hot else 1)
