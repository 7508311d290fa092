"""The operator-load benchmark's cluster: workloads with their past, objects made and removed."""

from __future__ import annotations

import contextlib
import functools
import math
import os
import time
import urllib.request
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import requests
from kubernetes import client
from kubernetes.client.exceptions import ApiException
from prometheus_api_client.exceptions import PrometheusApiClientException

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
from benchmarks.operator_load_classes import (
    CREATORS,
    NODE_LABEL,
    NODE_SHAPE,
    POD_USAGE,
    POLL_SECONDS,
    LoadClass,
    Options,
)
from benchmarks.operator_load_figures import MetricSamples, parse_metrics
from predictive_scaler.operator.resource import GROUP, PLURAL, VERSION
from predictive_scaler.promclient import instant_query
from predictive_scaler.scaling.policy import MAX_MISSING_SHARE
from predictive_scaler.units import parse_duration
from predictive_scaler_dev.demo.process import OperatorProcess
from predictive_scaler_dev.localcluster.kube import (
    USAGE_CPU_ANNOTATION,
    create_kwok_node,
    create_namespace,
    deployment_manifest,
    wait_nodes_ready,
)
from predictive_scaler_dev.localcluster.waiting import wait_until

SETTLE_SECONDS = 75.0  # Prometheus's block count unchanged this long: compaction is done


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
