"""Operator load: how one operator keeps up as the number of PredictiveScalers grows.

For each count N, on the local control plane: N one-pod Deployments and N
PredictiveScalers, then one `predictive-scaler run` on them; from its start
and over a few sync periods after every object's first evaluation, how
regularly each object is evaluated, how late, how long evaluations take, the
API requests they cost, and the memory and CPU of the operator and its
worker processes. Every Deployment has days of CPU history, backfilled into
Prometheus, so that the default model (`auto`) selects on real series.

With --mix 0,0.1 every count runs twice: all objects cheap, then a tenth of
them expensive (in a namespace of their own, so that fair queueing can be
seen): `auto` on 3 h of history at 5 s steps, refreshed as often as the CRD
allows, every 2 s.

    python -m benchmarks.operator_load [--counts 10,100,1000] [--model auto|holt]
        [--mix 0,0.1] [--sync-period 60s] [--cycles 3] [--workers 4]
        [--selection-workers 0] [--past 15d]
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import functools
import json
import math
import os
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import requests
import urllib3
from kubernetes import client
from kubernetes.client.exceptions import ApiException
from prometheus_api_client.exceptions import PrometheusApiClientException
from prometheus_client.parser import text_string_to_metric_families

import predictive_scaler_dev.localcluster as local
from benchmarks.load_history import (
    FINE_MARGIN,
    PastLoad,
    PastWindow,
    backfill_in_blocks,
    fine_every,
    loaded_query,
    operator_view_query,
    past_load,
    pod_matcher,
)
from benchmarks.process_tree import TreeSample, cores_used, peak_rss_kib, sample_tree
from benchmarks.report import format_seconds, machine_description, table, write_section
from benchmarks.status_watch import StatusWatch
from predictive_scaler.operator.resource import GROUP, PLURAL, VERSION, ForecastSettings
from predictive_scaler.promclient import instant_query
from predictive_scaler.scaling.policy import MAX_MISSING_SHARE
from predictive_scaler.units import parse_duration
from predictive_scaler_dev.demo.process import OperatorExitedError, OperatorProcess
from predictive_scaler_dev.demo.session import (
    apply_crds,
    cleanup_that_finishes,
    interrupt_on_signals,
)
from predictive_scaler_dev.localcluster.kube import (
    USAGE_CPU_ANNOTATION,
    NodeShape,
    create_kwok_node,
    create_namespace,
    deployment_manifest,
    wait_nodes_ready,
)
from predictive_scaler_dev.localcluster.waiting import wait_until

NAMESPACE = "ps-load"
NOISY_NAMESPACE = "ps-load-noisy"
SCRAPE_TARGET = "predictive-scaler-operator-load"
# Our nodes carry this label, so the leftovers of an interrupted run are found too.
NODE_LABEL = "predictive-scaler.io/benchmark=operator-load"
NODE_SHAPE = NodeShape(labels=dict([NODE_LABEL.split("=")]))
CREATORS = 8
POLL_SECONDS = 2.0
OPERATOR_SCRAPE_SECONDS = 30.0  # the chart's metrics.serviceMonitor.interval
# An evaluation is on time up to the sync period + 10 % (and, looser, + 50 %).
ON_TIME = (1.10, 1.50)
POD_USAGE = "200m"  # under targetPerReplica: replicas stay at 1, only evaluating is measured
# The run before auto was the default: holt on a short live history.
HOLT_FORECAST = {"models": ["holt"], "history": "10m", "step": "30s", "refresh": "10m"}
# The expensive objects: auto on 2,160 points, evaluated every 2 s (the CRD's floor).
EXPENSIVE_HISTORY, EXPENSIVE_STEP, EXPENSIVE_SYNC = "3h", "5s", "2s"
# The CRD's floor of refresh: 10 s plus 2.5 ms per history point (history / step),
# written there as 400 x refresh >= 4000 + points, in whole seconds.
REFRESH_FLOOR_PER_SECOND, REFRESH_FLOOR_BASE = 400, 4000
# Seconds a first evaluation may take per object before the run measures anyway:
# a fresh auto selection costs about a second of CPU (BENCHMARKS.md, Forecasting).
FIRST_EVALUATION_ALLOWANCE = {"auto": 2.0, "fixed": 0.5}
SETTLE_SECONDS = 75.0  # Prometheus's block count unchanged this long: compaction is done
HISTOGRAM = "predictive_scaler_reconcile_duration_seconds"
SELECTION_HISTOGRAM = "predictive_scaler_selection_cpu_seconds"
API_COUNTER = "predictive_scaler_api_requests_total"
LATENESS_GAUGE = "predictive_scaler_evaluation_lateness_seconds"
LATE_CONDITION = "EvaluationsLate"
MetricSamples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def shortest_refresh(history: str, step: str) -> str:
    """The shortest refresh the CRD accepts for ``history`` at ``step``, whole seconds up."""
    points = int(parse_duration(history) // parse_duration(step))
    return f"{-(-(REFRESH_FLOOR_BASE + points) // REFRESH_FLOOR_PER_SECOND)}s"


@dataclass(frozen=True)
class LoadClass:
    """One kind of object: where they live, how often they are evaluated, how they forecast."""

    kind: str  # "cheap" | "expensive"
    namespace: str
    prefix: str  # of their Deployments' names, and so of their pods'
    sync_period: str
    forecast: Mapping[str, Any] | None  # spec.forecast; None leaves the CRD's defaults

    @property
    def settings(self) -> ForecastSettings:
        """The forecast settings the operator will read, defaults filled in."""
        return ForecastSettings.model_validate(dict(self.forecast or {}))

    @property
    def sync_seconds(self) -> float:
        return parse_duration(self.sync_period)

    @property
    def selects(self) -> bool:
        return "auto" in self.settings.models

    def names(self, count: int) -> list[str]:
        return [f"{self.prefix}{index:04d}" for index in range(count)]

    def scaler(self, name: str) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
            "minReplicas": 1,
            "maxReplicas": 3,
            "syncPeriod": self.sync_period,
            "metric": {"resource": "cpu", "targetPerReplica": "500m"},
            "scaling": {"mode": "Auto", "leadTime": "60s"},
        }
        if self.forecast is not None:
            spec["forecast"] = dict(self.forecast)
        return {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "PredictiveScaler",
            "metadata": {"name": name, "namespace": self.namespace},
            "spec": spec,
        }

    def describe(self) -> str:
        settings = self.settings
        models = ", ".join(settings.models)
        return (
            f"{models} on {settings.history} at {settings.step} steps, refresh "
            f"{settings.refresh}, syncPeriod {self.sync_period}"
        )


def cheap_class(model: str, sync_period: str) -> LoadClass:
    """auto with every forecast setting at the CRD's default (what a new user gets),
    or holt as the runs before auto was the default."""
    forecast = None if model == "auto" else HOLT_FORECAST
    return LoadClass("cheap", NAMESPACE, "w-", sync_period, forecast)


def expensive_class() -> LoadClass:
    refresh = shortest_refresh(EXPENSIVE_HISTORY, EXPENSIVE_STEP)
    forecast = {
        "models": ["auto"],
        "history": EXPENSIVE_HISTORY,
        "step": EXPENSIVE_STEP,
        "refresh": refresh,
    }
    return LoadClass("expensive", NOISY_NAMESPACE, "x-", EXPENSIVE_SYNC, forecast)


def split(count: int, mix: float) -> tuple[int, int]:
    """(cheap, expensive) objects of ``count``: the expensive share rounded half up."""
    expensive = min(count, math.floor(count * mix + 0.5))
    return count - expensive, expensive


@dataclass(frozen=True)
class Options:
    classes: tuple[LoadClass, ...]  # the cheap one, then the expensive one
    mixes: tuple[float, ...]  # each count runs at each of these expensive shares
    cycles: int
    workers: int
    selection_workers: int
    past: str
    logs: Path

    @staticmethod
    def counts(count: int, mix: float) -> dict[str, int]:
        cheap, expensive = split(count, mix)
        return {"cheap": cheap, "expensive": expensive}

    def largest(self, counts: Sequence[int]) -> dict[str, int]:
        """The most objects of each class any run needs: the Deployments to make."""
        runs = [self.counts(count, mix) for count in counts for mix in self.mixes]
        return {c.kind: max(run[c.kind] for run in runs) for c in self.classes}

    @property
    def window_seconds(self) -> float:
        return self.cycles * self.classes[0].sync_seconds


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


def delete_nodes(core: client.CoreV1Api) -> None:
    for node in core.list_node(label_selector=NODE_LABEL).items:
        if node.metadata is not None and node.metadata.name is not None:
            with contextlib.suppress(ApiException):
                core.delete_node(node.metadata.name)


def scaler_statuses(custom: client.CustomObjectsApi, namespace: str) -> dict[str, dict[str, Any]]:
    """Every PredictiveScaler's status in the namespace by name, from one list call."""
    listed: Any = custom.list_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL)
    return {item["metadata"]["name"]: item.get("status") or {} for item in listed["items"]}


def release_finalizers(custom: client.CustomObjectsApi, namespace: str) -> None:
    """Without a running operator nothing releases kopf's finalizer; these objects are ours."""
    with contextlib.suppress(ApiException):
        names = list(scaler_statuses(custom, namespace))
        for name in names:
            with contextlib.suppress(ApiException):
                patch = {"metadata": {"finalizers": None}}
                custom.patch_namespaced_custom_object(
                    GROUP, VERSION, namespace, PLURAL, name, patch
                )


def delete_namespaces(
    core: client.CoreV1Api, custom: client.CustomObjectsApi, namespaces: Sequence[str]
) -> None:
    for namespace in namespaces:
        release_finalizers(custom, namespace)
        with contextlib.suppress(ApiException):
            core.delete_namespace(namespace)

    def gone() -> bool:
        names = {n.metadata.name for n in core.list_namespace().items if n.metadata}
        return not names & set(namespaces)

    # Their pods go first, a thousand of them in minutes on two cores.
    what = f"namespaces {', '.join(namespaces)} to be deleted"
    wait_until(gone, timeout=600, what=what, interval=1.0)


def delete_collection(custom: client.CustomObjectsApi, namespace: str) -> bool:
    """One try at deleting every PredictiveScaler of the namespace; False when it timed out.

    Under a thousand objects' load the API server can answer 504 before the
    collection is through; it has marked some, and the next try the rest.
    """
    try:
        custom.delete_collection_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL)
    except ApiException as error:
        if error.status is None or error.status < 500:
            raise
        return False
    return True


def delete_scalers(
    custom: client.CustomObjectsApi,
    operator: OperatorProcess,
    namespaces: Sequence[str],
    count: int,
) -> None:
    """Deleted while the operator runs, so that it releases its finalizers itself."""
    for namespace in namespaces:
        what = f"the PredictiveScalers of {namespace} to be marked for deletion"
        wait_until(functools.partial(delete_collection, custom, namespace), timeout=600, what=what)

    def gone() -> bool:
        return not any(scaler_statuses(custom, namespace) for namespace in namespaces)

    with contextlib.suppress(TimeoutError):  # then the finalizers are released below
        if operator.running():
            what = "the operator to release its finalizers"
            wait_until(gone, timeout=60 + 0.2 * count, what=what, interval=POLL_SECONDS)
    for namespace in namespaces:
        release_finalizers(custom, namespace)
    wait_until(gone, timeout=60, what="PredictiveScalers to be deleted", interval=1.0)


def prepare_workloads(
    cluster: local.LocalCluster,
    api: client.ApiClient,
    largest: Mapping[str, int],
    options: Options,
    cleanup: contextlib.ExitStack,
) -> None:
    """Nodes, namespaces and every class's Deployments Running, with their past in Prometheus.

    Shared by every count. The operator forecasts only once more than half of
    the recent history has samples (MAX_MISSING_SHARE), and reads its long
    history once, when it first evaluates an object: the past is written and
    loaded before any PredictiveScaler exists.
    """
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    custom = client.CustomObjectsApi(api)
    namespaces = [c.namespace for c in options.classes if largest[c.kind]]
    delete_namespaces(core, custom, namespaces)  # an interrupted run's leftovers
    delete_nodes(core)
    cleanup.callback(delete_nodes, core)
    total = sum(largest.values())
    nodes = [f"kwok-load-{index}" for index in range(math.ceil(total / NODE_SHAPE.pods))]
    for node in nodes:
        create_kwok_node(core, node, NODE_SHAPE)
    wait_nodes_ready(core, nodes, timeout=120)
    for namespace in namespaces:
        create_namespace(core, namespace)
    cleanup.callback(delete_namespaces, core, custom, namespaces)

    def create_deployment(load_class: LoadClass, name: str) -> None:
        body = deployment_manifest(name, 1, cpu_request="10m")
        body["spec"]["template"]["metadata"]["annotations"] = {USAGE_CPU_ANNOTATION: POD_USAGE}
        apps.create_namespaced_deployment(load_class.namespace, body)  # type: ignore[arg-type]

    def running(namespace: str) -> int:
        pods = core.list_namespaced_pod(namespace, field_selector="status.phase=Running")
        return len(pods.items)

    say(f"{total} Deployments on {len(nodes)} extra kwok nodes: {describe_counts(largest)}")
    # No live pod has a sample before its Deployment exists: the past ends there.
    created_from: dict[str, float] = {}
    with ThreadPoolExecutor(CREATORS) as pool:
        for load_class in options.classes:
            if not largest[load_class.kind]:
                continue
            created_from[load_class.kind] = time.time()
            names = load_class.names(largest[load_class.kind])
            list(pool.map(lambda name, c=load_class: create_deployment(c, name), names))

    def all_running() -> bool:
        return all(running(c.namespace) == largest[c.kind] for c in options.classes)

    what = f"{total} pods Running"
    wait_until(all_running, timeout=60 + 0.5 * total, what=what, interval=POLL_SECONDS)
    loads = [
        past_load(
            c.namespace,
            c.names(largest[c.kind]),
            PastWindow(
                ends_at=created_from[c.kind],
                span=parse_duration(options.past),
                fine_span=parse_duration(c.settings.history) + FINE_MARGIN,
                fine_every=fine_every(c.settings.step_seconds, cluster.scrape_interval_seconds),
            ),
            seed=index,
        )
        for index, c in enumerate(options.classes)
        if largest[c.kind]
    ]
    backfill_history(cluster, loads)
    wait_for_history(cluster, loads, options.classes, largest)
    settle_prometheus(cluster)


def describe_counts(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{number:,} {kind}" for kind, number in counts.items() if number)


def backfill_history(cluster: local.LocalCluster, loads: Sequence[PastLoad]) -> None:
    samples = sum(load.counters.size for load in loads)
    hours = max(float(load.times[-1] - load.times[0]) for load in loads) / 3600
    span = f"{hours:.1f} hours" if hours < 48 else f"{hours / 24:.1f} days"
    say(f"backfilling {span} of CPU history: {samples:,} samples into Prometheus")
    began = time.monotonic()
    blocks = backfill_in_blocks(cluster, loads, workers=os.cpu_count() or 1)
    say(f"{blocks} blocks written in {time.monotonic() - began:.0f} s")


def count_until(cluster: local.LocalCluster, promql: str, wanted: int, *, timeout: float) -> None:
    """Repeat a count() query until it reaches ``wanted``; TimeoutError with the last answer."""
    deadline, last = time.monotonic() + timeout, "no answer yet"
    while True:
        try:
            found = instant_query(cluster.prometheus_url, promql, timeout=60.0)
            counted = found[0].value if found else 0.0
            if counted >= wanted:
                return
            last = f"{counted:.0f} of {wanted}"
        except (requests.RequestException, PrometheusApiClientException) as error:
            last = f"error: {error}"
        if time.monotonic() > deadline:
            raise TimeoutError(f"{promql!r}: {last} after {timeout:.0f} s")
        time.sleep(5.0)


def wait_for_history(
    cluster: local.LocalCluster,
    loads: Sequence[PastLoad],
    classes: Sequence[LoadClass],
    counts: Mapping[str, int],
) -> None:
    """Until Prometheus holds every past sample, and every Deployment's load, as the
    operator's range query will read it, has a little more history than forecasting needs."""
    say("waiting for Prometheus to load the blocks (it looks once a minute)")
    for load in loads:
        count_until(cluster, loaded_query(load), len(load.workloads), timeout=600)
    share = MAX_MISSING_SHARE + 0.1
    # The operator's own rate window: two steps, and four scrapes at least.
    scrapes = 4 * cluster.scrape_interval_seconds
    for load_class in classes:
        if not counts[load_class.kind]:
            continue
        settings = load_class.settings
        promql = operator_view_query(
            pod_matcher(load_class.namespace, load_class.prefix),
            step=settings.step_seconds,
            history=parse_duration(settings.history),
            rate_window=max(2 * settings.step_seconds, scrapes),
            share=share,
        )
        count_until(cluster, promql, counts[load_class.kind], timeout=120)
        say(f"every {load_class.kind} Deployment has {share:.0%} of its {settings.history}")


def prometheus_self(cluster: local.LocalCluster) -> MetricSamples:
    with urllib.request.urlopen(f"{cluster.prometheus_url}/metrics", timeout=10) as response:
        return parse_metrics(response.read().decode())


def settle_prometheus(cluster: local.LocalCluster) -> None:
    """Until Prometheus has compacted the backfilled blocks, which would otherwise take
    CPU from the operator during the measurement."""
    watched = ("prometheus_tsdb_blocks_loaded", "prometheus_tsdb_compactions_total")

    def reading() -> tuple[float, ...]:
        metrics = prometheus_self(cluster)
        return tuple(metrics.get((name, frozenset()), math.nan) for name in watched)

    began = time.monotonic()
    last, since = reading(), time.monotonic()
    while time.monotonic() - since < SETTLE_SECONDS:
        if time.monotonic() - began > 600:
            say("Prometheus still compacting after 10 min; measuring anyway")
            return
        time.sleep(5.0)
        now = reading()
        if now != last:
            last, since = now, time.monotonic()
    say(f"Prometheus settled: {last[0]:.0f} blocks, after {time.monotonic() - began:.0f} s")


def create_scalers(
    custom: client.CustomObjectsApi, classes: Sequence[LoadClass], counts: Mapping[str, int]
) -> float:
    """The first ``counts`` workloads' PredictiveScalers of each class; returns the seconds."""

    def create(load_class: LoadClass, name: str) -> None:
        body = load_class.scaler(name)
        custom.create_namespaced_custom_object(GROUP, VERSION, load_class.namespace, PLURAL, body)

    began = time.perf_counter()
    with ThreadPoolExecutor(CREATORS) as pool:
        for c in classes:
            list(pool.map(lambda name, c=c: create(c, name), c.names(counts[c.kind])))
    return time.perf_counter() - began


def say(text: str) -> None:
    print(f"==> {text}", flush=True)


@dataclass
class Observation:
    """What watching and polling the objects and sampling the operator's process tree found."""

    classes: tuple[LoadClass, ...]
    counts: Mapping[str, int]
    started: float  # epoch: the operator's launch
    seen: dict[str, dict[str, set[float]]] = field(default_factory=dict)
    first_forecast: dict[str, dict[str, float]] = field(default_factory=dict)
    statuses: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    samples: list[TreeSample] = field(default_factory=list)

    def __post_init__(self) -> None:
        for c in self.classes:
            self.seen[c.kind], self.first_forecast[c.kind], self.statuses[c.kind] = {}, {}, {}

    # The polls and the status watches (threads of their own) record here.
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def record(self, load_class: LoadClass, statuses: Mapping[str, dict[str, Any]]) -> None:
        for name, status in statuses.items():
            self.record_one(load_class.kind, name, status)

    def record_one(self, kind: str, name: str, status: dict[str, Any]) -> None:
        with self.lock:
            self.statuses[kind][name] = status
            if (at := evaluated_at(status)) is not None:
                self.seen[kind].setdefault(name, set()).add(at)
            if "forecast" in status:
                self.first_forecast[kind].setdefault(name, time.time())

    def all_evaluated(self) -> bool:
        return all(
            sum(1 for times in self.seen[c.kind].values() if times) >= self.counts[c.kind]
            for c in self.classes
        )

    def evaluated(self) -> int:
        return sum(len(self.seen[c.kind]) for c in self.classes)


def operator_metrics(operator: OperatorProcess, *, tries: int = 3) -> MetricSamples:
    """The operator's metrics; a busy operator gets longer than OperatorProcess's 2 s."""
    url = f"http://127.0.0.1:{operator.metrics_port}/metrics"
    for attempt in range(tries):
        try:
            with urllib.request.urlopen(url, timeout=15) as response:
                return parse_metrics(response.read().decode())
        except OSError:
            if attempt == tries - 1:
                raise
            time.sleep(2.0)
    raise AssertionError("unreachable")


def poll_every(load_class: LoadClass) -> float:
    """Four times a period: what a status watch missed (while it listed again) is caught up.

    Every lastEvaluationTime comes from the watch (:mod:`benchmarks.status_watch`);
    a poll alone misses the turns a new model wakes shortly before a due one.
    No more often: listing 1,000 objects every 2 s loads the API server on the
    operator's two cores with work no production cluster would carry.
    """
    return load_class.sync_seconds / 4


def observe(
    custom: client.CustomObjectsApi,
    operator: OperatorProcess,
    observation: Observation,
    deadline: float,
    done: Callable[[], bool] = lambda: False,
) -> None:
    """Poll each class at its own pace and the process tree every POLL_SECONDS, until
    ``deadline`` (monotonic) or ``done()``. A sampling cadence, not a synchronisation."""
    classes = [c for c in observation.classes if observation.counts[c.kind]]
    due = {c.kind: 0.0 for c in classes}
    tree_due = 0.0
    while True:
        if not operator.running():
            raise OperatorExitedError(operator.log_tail())
        now = time.monotonic()
        for c in classes:
            if now >= due[c.kind]:
                due[c.kind] = now + poll_every(c)
                # A busy API server may fail a list: the next turn lists again.
                with contextlib.suppress(ApiException, urllib3.exceptions.HTTPError):
                    observation.record(c, scaler_statuses(custom, c.namespace))
        if now >= tree_due:
            tree_due = now + POLL_SECONDS
            observation.samples.append(sample_tree(operator.pid))
        if done() or now >= deadline:
            return
        next_turn = min([*due.values(), tree_due, deadline])
        time.sleep(max(0.0, next_turn - time.monotonic()))


def run_count(
    cluster: local.LocalCluster, api: client.ApiClient, count: int, mix: float, options: Options
) -> LoadResult:
    custom = client.CustomObjectsApi(api)
    counts = options.counts(count, mix)
    classes = tuple(c for c in options.classes if counts[c.kind])
    namespaces = [c.namespace for c in classes]
    with cleanup_that_finishes() as cleanup:
        env = {
            "PREDICTIVE_SCALER_REBALANCE_MODE": "Off",
            "PREDICTIVE_SCALER_NAMESPACES": ",".join(namespaces),
            # The operator reads only the variables it knows: the old name for its
            # evaluation threads and the new, and the selection processes (0: a core each).
            "PREDICTIVE_SCALER_FORECAST_WORKERS": str(options.workers),
            "PREDICTIVE_SCALER_EVALUATION_WORKERS": str(options.workers),
            "PREDICTIVE_SCALER_SELECTION_WORKERS": str(options.selection_workers),
        }
        log = options.logs / f"operator-{count}-mix-{mix:g}.log"
        operator = OperatorProcess(cluster, NAMESPACE, log, extra_env=env)
        cleanup.callback(cluster.remove_scrape_target, SCRAPE_TARGET)
        cleanup.callback(operator.stop)
        # Registered last, so it runs first: the objects go while the operator still runs.
        cleanup.callback(delete_scalers, custom, operator, namespaces, count)
        creation = create_scalers(custom, classes, counts)
        launched, launched_at = time.monotonic(), time.time()
        operator.start()
        observation = Observation(classes, counts, started=launched_at)
        watches = [
            cleanup.enter_context(
                StatusWatch(custom, c.namespace, functools.partial(observation.record_one, c.kind))
            )
            for c in classes
        ]
        # Scraped as the chart's ServiceMonitor does, not at the compressed cluster's 2 s:
        # at 1,000 objects one exposition is 18,000 lines and took the busy operator 0.9-2 s.
        cluster.add_scrape_target(
            SCRAPE_TARGET,
            f"127.0.0.1:{operator.metrics_port}",
            interval_seconds=OPERATOR_SCRAPE_SECONDS,
        )
        say(f"{describe_counts(counts)} PredictiveScalers; operator pid {operator.pid}, log {log}")
        allowance = sum(
            counts[c.kind] * FIRST_EVALUATION_ALLOWANCE["auto" if c.selects else "fixed"]
            for c in classes
        )
        deadline = time.monotonic() + 120 + allowance
        observe(custom, operator, observation, deadline, observation.all_evaluated)
        waited = time.monotonic() - launched
        if observation.all_evaluated():
            say(f"all evaluated within {waited:.0f} s; measuring {options.cycles} periods")
        else:
            say(
                f"only {observation.evaluated()} of {count} evaluated after {waited:.0f} s; "
                f"measuring {options.cycles} periods anyway"
            )
        result = measure(custom, operator, observation, mix=mix, options=options, creation=creation)
        if relists := sum(w.relists for w in watches):
            say(f"the status watches listed again {relists} times (stamps in between were polled)")
        return result


def measure(
    custom: client.CustomObjectsApi,
    operator: OperatorProcess,
    observation: Observation,
    *,
    mix: float,
    options: Options,
    creation: float,
) -> LoadResult:
    """Keep polling for ``cycles`` of the longest sync period; then the figures."""
    before = operator_metrics(operator)
    window_from = len(observation.samples)
    measured_from = time.time()
    deadline = time.monotonic() + options.window_seconds
    observe(custom, operator, observation, deadline)
    after = operator_metrics(operator)
    # A last list: the window ends when it was asked, so an evaluation after the
    # class's previous poll (a quarter period ago) is not mistaken for a late one.
    ended = time.time()
    for c in observation.classes:
        if observation.counts[c.kind]:
            observation.record(c, scaler_statuses(custom, c.namespace))
    keep_stamps(
        observation, options.logs / f"stamps-{sum(observation.counts.values())}-mix-{mix:g}.json"
    )
    window = {key: value - before.get(key, 0.0) for key, value in after.items()}
    samples = observation.samples[window_from - 1 :]
    elapsed = samples[-1].at - samples[0].at
    lateness = per_object(after, LATENESS_GAUGE)
    classes = tuple(
        class_result(observation, c, (measured_from, ended), lateness if lateness else None)
        for c in observation.classes
    )
    object_cycles = sum(
        observation.counts[c.kind] * elapsed / c.sync_seconds for c in observation.classes
    )
    by_kind = {
        f"{dict(labels).get('verb')} {dict(labels).get('resource')}": value / object_cycles
        for (name, labels), value in window.items()
        if name == API_COUNTER
    }
    selections = window.get((f"{SELECTION_HISTOGRAM}_count", frozenset()))
    return LoadResult(
        objects=sum(observation.counts.values()),
        mix=mix,
        classes=classes,
        creation_seconds=creation,
        # From the evaluation stamps, as each class's, not from when a poll saw them.
        first_evaluation_seconds=max(c.first_evaluation[1] for c in classes),
        evaluations=int(window.get((f"{HISTOGRAM}_count", frozenset()), 0)),
        evaluation_seconds=tuple(
            histogram_quantile(window, f"{HISTOGRAM}_bucket", q) for q in (0.5, 0.95, 0.99)
        ),
        selections=None if selections is None else int(selections),
        selection_cpu_p50=histogram_quantile(window, f"{SELECTION_HISTOGRAM}_bucket", 0.5),
        api_by_kind=by_kind,
        peak_rss_mib=peak_rss_kib(observation.samples) / 1024,
        mean_rss_mib=float(np.mean([s.rss_kib for s in samples])) / 1024,
        cpu_cores=cores_used(samples),
        processes=max(s.processes for s in observation.samples),
    )


def keep_stamps(observation: Observation, path: Path) -> None:
    """Every evaluation stamp seen, per class and object, beside the operator's log.

    The table says how many objects had a late gap; these say when, so a late
    gap shared by many objects at one moment (a stall) can be told from one
    object's own (its turn queued behind others).
    """
    stamps = {
        kind: {name: sorted(times) for name, times in sorted(seen.items())}
        for kind, seen in observation.seen.items()
    }
    path.write_text(json.dumps({"started": observation.started, "stamps": stamps}) + "\n")
    say(f"evaluation stamps in {path}")


def class_result(
    observation: Observation,
    load_class: LoadClass,
    measured: tuple[float, float],
    lateness: Mapping[tuple[str, str], float] | None,
) -> ClassResult:
    """``measured``: from when every object had a first evaluation to the end (epoch)."""
    kind, started = load_class.kind, observation.started
    (measured_from, ended) = measured
    names = load_class.names(observation.counts[kind])
    seen, statuses = observation.seen[kind], observation.statuses[kind]
    limits = [load_class.sync_seconds * factor for factor in ON_TIME]
    gaps, within = gaps_and_shares(seen, names, (started, ended), limits)
    steady_from = measured_from + load_class.sync_seconds
    _, steady_within = gaps_and_shares(
        since(seen, steady_from), names, (steady_from, ended), limits
    )
    late_values = (
        None
        if lateness is None
        else [
            lateness[(load_class.namespace, n)]
            for n in names
            if (load_class.namespace, n) in lateness
        ]
    )
    reported = [condition_status(statuses.get(n, {}), LATE_CONDITION) for n in names]
    # Without the lateness gauge an absent condition means an operator that has none;
    # with it, an object not (yet) late.
    late = (
        None
        if lateness is None and not any(reported)
        else sum(r == "True" for r in reported) / len(names)
    )
    forecast_at = observation.first_forecast[kind]
    return ClassResult(
        kind=kind,
        objects=len(names),
        sync_seconds=load_class.sync_seconds,
        first_evaluation=first_evaluations(seen, names, started),
        within=tuple(within),
        steady_within=tuple(steady_within),
        gap_seconds=spread(gaps),
        lateness_seconds=None if late_values is None else spread(late_values),
        late=late,
        forecasting=sum("forecast" in statuses.get(n, {}) for n in names) / len(names),
        all_forecasting_after=(
            max(forecast_at[n] for n in names) - started
            if all(n in forecast_at for n in names)
            else math.nan
        ),
    )


def figures(values: Sequence[float], scale: float, unit: str) -> str:
    return " / ".join("n/a" if math.isnan(v) else f"{v * scale:.0f}" for v in values) + f" {unit}"


def class_row(count: int, result: ClassResult) -> dict[str, str]:
    """One row of the objects' table, by column header."""
    p50, longest = result.first_evaluation
    lateness = result.lateness_seconds
    return {
        "objects": f"{count:,}",
        "class": f"{result.kind} ({result.objects:,})",
        "syncPeriod": f"{result.sync_seconds:g} s",
        "first evaluation p50 / all": (
            f"{format_seconds(p50)} / "
            + ("not all" if math.isnan(longest) else format_seconds(longest))
        ),
        "within interval +10 % / +50 %": " / ".join(f"{share:.0%}" for share in result.within),
        "after start-up": " / ".join(f"{share:.0%}" for share in result.steady_within),
        "gap p50 / p95 / max": figures(result.gap_seconds, 1, "s"),
        "lateness p50 / p95 / max": "n/a" if lateness is None else figures(lateness, 1, "s"),
        LATE_CONDITION: "n/a" if result.late is None else f"{result.late:.0%}",
        "forecasting": f"{result.forecasting:.0%}",
        "all forecasting after": (
            "not all"
            if math.isnan(result.all_forecasting_after)
            else format_seconds(result.all_forecasting_after)
        ),
    }


def operator_row(result: LoadResult) -> dict[str, str]:
    """One row of the operator's table, by column header."""
    api = result.api_per_object_cycle
    selections = (
        "n/a"
        if result.selections is None
        else f"{result.selections:,} ({figures([result.selection_cpu_p50], 1e3, 'ms')} CPU p50)"
    )
    expensive = sum(c.objects for c in result.classes if c.kind == "expensive")
    return {
        "objects": f"{result.objects:,}" + (f" ({expensive:,} expensive)" if expensive else ""),
        "creation": format_seconds(result.creation_seconds),
        "first evaluation of all": (
            "not all"
            if math.isnan(result.first_evaluation_seconds)
            else format_seconds(result.first_evaluation_seconds)
        ),
        "evaluations in window": f"{result.evaluations:,}",
        "evaluation p50 / p95 / p99": figures(result.evaluation_seconds, 1e3, "ms"),
        "selections in window": selections,
        "API requests per object per cycle": "n/a" if api is None else f"{api:.1f}",
        "peak RSS": f"{result.peak_rss_mib:.0f} MiB",
        "mean RSS": f"{result.mean_rss_mib:.0f} MiB",
        "CPU": f"{result.cpu_cores:.2f} cores",
        "processes": f"{result.processes}",
    }


def results_tables(results: Sequence[LoadResult]) -> list[str]:
    rows = [class_row(r.objects, c) for r in results for c in r.classes]
    operator = [operator_row(r) for r in results]
    return [
        *table(list(rows[0]), [list(row.values()) for row in rows]),
        "",
        *table(list(operator[0]), [list(row.values()) for row in operator]),
    ]


def scaling_curve(results: Sequence[LoadResult]) -> str:
    """From the smallest to the largest count at the first mix."""
    same = [r for r in results if r.mix == results[0].mix]
    if len(same) < 2:
        return "One count only, so no scaling curve."
    small, large = same[0], same[-1]
    per_added = (large.peak_rss_mib - small.peak_rss_mib) * 1024 / (large.objects - small.objects)
    return (
        f"From {small.objects:,} to {large.objects:,} objects, peak RSS grows from "
        f"{small.peak_rss_mib:.0f} to {large.peak_rss_mib:.0f} MiB ({per_added:.0f} KiB per "
        f"added object) and CPU from {small.cpu_cores:.2f} to {large.cpu_cores:.2f} cores "
        f"({small.cpu_cores * 1e3 / small.objects:.1f} millicores per object at "
        f"{small.objects:,}, {large.cpu_cores * 1e3 / large.objects:.1f} at {large.objects:,})."
    )


def reproduce(args: argparse.Namespace) -> str:
    return (
        f"`.venv/bin/python -m benchmarks.operator_load --counts {args.counts} --model "
        f"{args.model} --mix {args.mix} --sync-period {args.sync_period} --cycles "
        f"{args.cycles} --workers {args.workers} --selection-workers {args.selection_workers} "
        f"--past {args.past}`"
    )


def mixed_sentence(mixes: Sequence[float]) -> str:
    """What the expensive share of a run means, or nothing when no run has one."""
    if not any(mixes):
        return ""
    shares = " and ".join(f"{mix:.0%}" for mix in mixes)
    points = int(parse_duration(EXPENSIVE_HISTORY) // parse_duration(EXPENSIVE_STEP))
    return (
        f" Each count runs with an expensive share of {shares}: that share of its objects "
        f"(rounded) is expensive instead, in `{NOISY_NAMESPACE}` so that fair queueing between "
        f"namespaces shows: {expensive_class().describe()} (the shortest refresh the CRD "
        f"accepts for {points:,} points, 10 s plus 2.5 ms a point, in whole seconds up)."
    )


def method(results: Sequence[LoadResult], options: Options, args: argparse.Namespace) -> str:
    made = options.largest([r.objects for r in results])
    deployments = " and ".join(
        f"{made[c.kind]:,} in `{c.namespace}`" for c in options.classes if made[c.kind]
    )
    cheap = options.classes[0]
    defaults = " (every forecast setting at the CRD default)" if cheap.forecast is None else ""
    processes = args.selection_workers or "at its default, one per core"
    return (
        "On the local control plane (API server, etcd, kwok nodes, Prometheus scraping every "
        f"2 s, the operator every {OPERATOR_SCRAPE_SECONDS:g} s as the chart's ServiceMonitor "
        f"does), {CREATORS} threads first create one-pod Deployments, {deployments} (10m CPU "
        f"requested, {POD_USAGE} used through kwok's usage annotation). Each gets "
        f"{args.past} of CPU history before its pods started, backfilled into Prometheus with "
        "promtool as the counter of one past pod matching the Deployment's pod names: a daily "
        f"sine ({POD_USAGE} +- 40 %) with noise, at a phase of its own, every half step over "
        "the recent history and every 150 s before. The run waits until Prometheus has loaded "
        "every sample and until the load of each Deployment, as the operator's range query "
        f"reads it, has {MAX_MISSING_SHARE + 0.1:.0%} of its history (below "
        f"{MAX_MISSING_SHARE:.0%} the operator holds with MissingMetrics and fits no model), "
        "and until Prometheus has compacted the blocks. For each count N the threads then "
        f"create N PredictiveScalers on the first Deployments, in `{NAMESPACE}`: "
        f"{cheap.describe()}{defaults}, Auto, CPU, targetPerReplica 500m, 1 to 3 replicas, "
        f"leadTime 60s; creation is their wall time.{mixed_sentence(options.mixes)} One "
        f"`predictive-scaler run` ({args.workers} evaluation threads, selection processes "
        f"{processes}, rebalancing off) is started on the namespaces. From its launch every "
        "status change of the objects is watched (a list every quarter period catches up "
        "what a watch that had to list again missed), until each has "
        "`status.lastEvaluationTime` (first evaluation, from the operator's launch), then for "
        f"{args.cycles} periods of {cheap.sync_period}, and a last list at the end. Each "
        "object's successive `lastEvaluationTime` values (whole seconds) give its gaps "
        "(polling alone misses a turn a new model woke shortly before a due one), "
        "start-up included; it is within its interval when every gap, and the time from its "
        "last evaluation to the window's end, is at most the sync period + 10 % (or + 50 %), "
        "rounded up to a whole second. After start-up counts only the gaps that end a period "
        "or more after every object's first evaluation (an operator's restart or failover "
        "evaluates every object afresh, and the first turns read the long history). "
        f"Lateness is the operator's `{LATENESS_GAUGE}` over the objects at the end, "
        f"and {LATE_CONDITION} the share of objects whose condition is True then (n/a: the "
        "operator exports neither). Forecasting is the share whose last status carried a "
        "forecast; all forecasting after, from the operator's launch until the last object's "
        "first forecast. The operator's figures are over the window after every first "
        f"evaluation: evaluation duration (queueing included) from `{HISTOGRAM}`, selections "
        f"from `{SELECTION_HISTOGRAM}`, interpolated as `histogram_quantile` does; API "
        f"requests are `{API_COUNTER}` (its own client; kopf's watches are not counted) per "
        "object and sync period. CPU (utime + stime, reaped children's included) and RSS are "
        "those of the operator and every process below it, from /proc every 2 s; peak RSS is "
        "the highest sampled total since the launch (or the operator process's own VmHWM if "
        "higher). The PredictiveScalers are deleted, and the operator stopped, between runs."
    )


def render(
    results: Sequence[LoadResult], options: Options, args: argparse.Namespace, notes: str
) -> str:
    first_mix = [r for r in results if r.mix == results[0].mix]
    largest = first_mix[-1]
    kinds = [[k, f"{v:.2f}"] for k, v in sorted(largest.api_by_kind.items(), key=lambda i: -i[1])]
    return "\n".join(
        [
            "## Operator load: one operator, many PredictiveScalers",
            "",
            f"- Date: {datetime.date.today().isoformat()}; {notes}",
            f"- Machine: {machine_description()}",
            f"- Reproduce: {reproduce(args)}",
            "",
            "### Method",
            "",
            method(results, options, args),
            "",
            *results_tables(results),
            "",
            scaling_curve(results),
            "",
            f"### API requests per object per cycle, {operator_row(largest)['objects']} objects",
            "",
            *(table(("verb resource", "requests"), kinds) if kinds else [f"n/a: no {API_COUNTER}"]),
            "",
        ]
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--counts", default="10,100,1000", help="object counts, commas")
    parser.add_argument(
        "--model",
        choices=("auto", "holt"),
        default="auto",
        help="auto: the CRD's default forecast settings; holt: 10m of history at 30s steps",
    )
    parser.add_argument(
        "--mix",
        default="0",
        help="shares of expensive objects, commas: each count runs at each (e.g. 0,0.1)",
    )
    parser.add_argument("--sync-period", default="60s", help="spec.syncPeriod of the cheap ones")
    parser.add_argument(
        "--cycles", type=int, default=3, help="sync periods measured after the first evaluations"
    )
    parser.add_argument("--workers", type=int, default=4, help="the operator's evaluation threads")
    parser.add_argument(
        "--selection-workers",
        type=int,
        default=0,
        help="the operator's selection processes (0: its default, one per core)",
    )
    parser.add_argument("--past", default="15d", help="CPU history backfilled per Deployment")
    parser.add_argument("--output", type=Path, default=Path("BENCHMARKS.md"))
    args = parser.parse_args(argv)
    try:
        counts = sorted(int(count) for count in args.counts.split(","))
        mixes = tuple(float(mix) for mix in args.mix.split(","))
        parse_duration(args.sync_period)
        past = parse_duration(args.past)
    except ValueError as error:
        parser.error(str(error))
    if not all(0.0 <= mix < 1.0 for mix in mixes):
        parser.error(f"--mix: every share must lie in [0, 1), got {args.mix}")
    options = Options(
        classes=(cheap_class(args.model, args.sync_period), expensive_class()),
        mixes=mixes,
        cycles=args.cycles,
        workers=args.workers,
        selection_workers=args.selection_workers,
        past=args.past,
        logs=Path(tempfile.mkdtemp(prefix="operator-load-")),
    )
    largest = options.largest(counts)
    used = [c for c in options.classes if largest[c.kind]]
    if past < max(parse_duration(c.settings.history) for c in used):
        parser.error(f"--past {args.past} is shorter than the history forecast on")
    load_before, began = os.getloadavg()[0], time.perf_counter()
    results: list[LoadResult] = []
    restore_sigterm = interrupt_on_signals()
    try:
        with cleanup_that_finishes() as cleanup:
            started = local.up()
            if not started.reused:
                cleanup.callback(local.down, started.cluster.run_dir)
            say(
                f"local cluster {'reused' if started.reused else 'started'}; logs in {options.logs}"
            )
            api = cleanup.enter_context(started.cluster.api())
            apply_crds(started.cluster)
            prepare_workloads(started.cluster, api, largest, options, cleanup)
            for mix in mixes:
                for count in counts:
                    results.append(run_count(started.cluster, api, count, mix, options))
                    print("\n".join(results_tables(results[-1:])), flush=True)
    finally:
        restore_sigterm()
    minutes = (time.perf_counter() - began) / 60
    notes = f"the run took {minutes:.1f} min; load average {load_before:.2f} before, "
    section = render(results, options, args, notes + f"{os.getloadavg()[0]:.2f} after")
    print(section)
    write_section(args.output, "operator-load", section)


if __name__ == "__main__":
    main()
