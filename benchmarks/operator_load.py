"""Operator load: how one operator keeps up as the number of PredictiveScalers grows.

For each count N, on the local control plane: N one-pod Deployments and N
PredictiveScalers in namespace ps-load, then one `predictive-scaler run` on
them; over a few sync periods, how regularly each object is evaluated, how long
evaluations take, the API requests they cost, and the operator's memory and CPU.

    python -m benchmarks.operator_load [--counts 10,100,300,1000] [--sync-period 60s]
        [--cycles 3] [--workers 4]
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import math
import os
import tempfile
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
from kubernetes import client
from kubernetes.client.exceptions import ApiException
from prometheus_client.parser import text_string_to_metric_families

import predictive_scaler.localcluster as local
from benchmarks.report import format_seconds, machine_description, table, write_section
from predictive_scaler.demo.process import OperatorExitedError, OperatorProcess
from predictive_scaler.demo.session import apply_crds, cleanup_that_finishes, interrupt_on_signals
from predictive_scaler.localcluster.kube import (
    USAGE_CPU_ANNOTATION,
    NodeShape,
    create_kwok_node,
    create_namespace,
    deployment_manifest,
    wait_nodes_ready,
)
from predictive_scaler.localcluster.prometheus import query_until
from predictive_scaler.localcluster.waiting import wait_until
from predictive_scaler.operator.resource import GROUP, PLURAL, VERSION
from predictive_scaler.promclient import Sample
from predictive_scaler.scaling.policy import MAX_MISSING_SHARE
from predictive_scaler.units import parse_duration

NAMESPACE = "ps-load"
SCRAPE_TARGET = "predictive-scaler-operator-load"
# Our nodes carry this label, so the leftovers of an interrupted run are found too.
NODE_LABEL = "predictive-scaler.io/benchmark=operator-load"
NODE_SHAPE = NodeShape(labels=dict([NODE_LABEL.split("=")]))
CREATORS = 8
POLL_SECONDS = 2.0
ON_TIME = 1.10  # an evaluation is on time up to the sync period + 10 %
HISTORY = "10m"
POD_USAGE = "200m"  # under targetPerReplica: replicas stay at 1, only evaluating is measured
HISTOGRAM = "predictive_scaler_reconcile_duration_seconds"
API_COUNTER = "predictive_scaler_api_requests_total"
MetricSamples = dict[tuple[str, frozenset[tuple[str, str]]], float]


@dataclass(frozen=True)
class Options:
    sync_period: str
    cycles: int
    workers: int
    logs: Path


@dataclass(frozen=True)
class ProcessSample:
    rss_kib: int
    peak_rss_kib: int  # VmHWM: the high-water mark since the process started
    cpu_seconds: float
    at: float


@dataclass(frozen=True)
class LoadResult:
    objects: int
    creation_seconds: float
    first_evaluation_seconds: float
    evaluations: int
    evaluation_seconds: tuple[float, ...]  # p50, p95, p99
    gap_seconds: tuple[float, ...]  # p50, p95, p99, max
    within_interval: float
    forecasting: float  # share of objects whose last status carried a forecast
    api_by_kind: Mapping[str, float]  # "verb resource" -> requests per object per cycle
    peak_rss_mib: float
    mean_rss_mib: float
    cpu_cores: float

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


def sample_process(pid: int) -> ProcessSample:
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    status = dict(line.split(":", 1) for line in lines)
    # The fields after the command name, which may hold spaces; utime, stime are 14 and 15.
    stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return ProcessSample(
        rss_kib=int(status["VmRSS"].split()[0]),
        peak_rss_kib=int(status["VmHWM"].split()[0]),
        cpu_seconds=(int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK"),
        at=time.monotonic(),
    )


def scaler_statuses(custom: client.CustomObjectsApi) -> dict[str, dict[str, Any]]:
    """Every PredictiveScaler's status by name, from one list call."""
    listed: Any = custom.list_namespaced_custom_object(GROUP, VERSION, NAMESPACE, PLURAL)
    return {item["metadata"]["name"]: item.get("status") or {} for item in listed["items"]}


def evaluated_at(status: Mapping[str, Any]) -> float | None:
    """status.lastEvaluationTime (RFC 3339) in epoch seconds."""
    stamp = status.get("lastEvaluationTime")
    return datetime.datetime.fromisoformat(stamp).timestamp() if stamp else None


def gaps_and_share_on_time(
    seen: Mapping[str, set[float]], window_end: float, limit: float
) -> tuple[list[float], float]:
    """Gaps between each object's evaluations, and the share whose gaps all stay within limit.

    The time from an object's last evaluation to the window's end counts as a gap
    once it exceeds the limit: an object that stops being evaluated is late, not absent.
    """
    gaps: list[float] = []
    on_time = 0
    for times in seen.values():
        ordered = sorted(times)
        own = [later - earlier for earlier, later in pairwise(ordered)]
        if window_end - ordered[-1] > limit:
            own.append(window_end - ordered[-1])
        gaps += own
        on_time += all(gap <= limit for gap in own)
    return gaps, on_time / max(1, len(seen))


def scaler(name: str, sync_period: str) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "PredictiveScaler",
        "metadata": {"name": name},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
            "minReplicas": 1,
            "maxReplicas": 3,
            "syncPeriod": sync_period,
            "metric": {"resource": "cpu", "targetPerReplica": "500m"},
            "forecast": {"models": ["holt"], "history": HISTORY, "step": "30s", "refresh": "10m"},
            "scaling": {"mode": "Auto", "leadTime": "60s"},
        },
    }


def workload_names(count: int) -> list[str]:
    return [f"w-{index:04d}" for index in range(count)]


def delete_nodes(core: client.CoreV1Api) -> None:
    for node in core.list_node(label_selector=NODE_LABEL).items:
        if node.metadata is not None and node.metadata.name is not None:
            with contextlib.suppress(ApiException):
                core.delete_node(node.metadata.name)


def release_finalizers(custom: client.CustomObjectsApi) -> None:
    """Without a running operator nothing releases kopf's finalizer; these objects are ours."""
    for name in scaler_statuses(custom):
        with contextlib.suppress(ApiException):
            patch = {"metadata": {"finalizers": None}}
            custom.patch_namespaced_custom_object(GROUP, VERSION, NAMESPACE, PLURAL, name, patch)


def delete_namespace(core: client.CoreV1Api, custom: client.CustomObjectsApi) -> None:
    release_finalizers(custom)
    with contextlib.suppress(ApiException):
        core.delete_namespace(NAMESPACE)

    def gone() -> bool:
        return all(n.metadata and n.metadata.name != NAMESPACE for n in core.list_namespace().items)

    # Its pods go first, a thousand of them in minutes on two cores.
    wait_until(gone, timeout=600, what=f"namespace {NAMESPACE} to be deleted", interval=1.0)


def delete_scalers(custom: client.CustomObjectsApi, operator: OperatorProcess, count: int) -> None:
    """Deleted while the operator runs, so that it releases its finalizers itself."""
    custom.delete_collection_namespaced_custom_object(GROUP, VERSION, NAMESPACE, PLURAL)

    def gone() -> bool:
        return not scaler_statuses(custom)

    with contextlib.suppress(TimeoutError):  # then the finalizers are released below
        if operator.running():
            what = "the operator to release its finalizers"
            wait_until(gone, timeout=60 + 0.2 * count, what=what, interval=POLL_SECONDS)
    release_finalizers(custom)
    wait_until(gone, timeout=60, what="PredictiveScalers to be deleted", interval=1.0)


def prepare_workloads(
    cluster: local.LocalCluster, api: client.ApiClient, count: int, cleanup: contextlib.ExitStack
) -> None:
    """Nodes, namespace and `count` Deployments Running, with their history in Prometheus.

    Shared by every count: the operator forecasts only once more than half of the
    history window has samples (MAX_MISSING_SHARE); until then it holds with
    MissingMetrics and fits no model, which would not be the load worth measuring.
    """
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    delete_namespace(core, client.CustomObjectsApi(api))  # an interrupted run's leftovers
    delete_nodes(core)
    cleanup.callback(delete_nodes, core)
    nodes = [f"kwok-load-{index}" for index in range(math.ceil(count / NODE_SHAPE.pods))]
    for node in nodes:
        create_kwok_node(core, node, NODE_SHAPE)
    wait_nodes_ready(core, nodes, timeout=120)
    create_namespace(core, NAMESPACE)
    cleanup.callback(delete_namespace, core, client.CustomObjectsApi(api))

    def create_deployment(name: str) -> None:
        body = deployment_manifest(name, 1, cpu_request="10m")
        body["spec"]["template"]["metadata"]["annotations"] = {USAGE_CPU_ANNOTATION: POD_USAGE}
        apps.create_namespaced_deployment(NAMESPACE, body)  # type: ignore[arg-type]

    def all_running() -> bool:
        pods = core.list_namespaced_pod(NAMESPACE, field_selector="status.phase=Running")
        return len(pods.items) == count

    say(f"{count} Deployments in {NAMESPACE} on {len(nodes)} extra kwok nodes")
    with ThreadPoolExecutor(CREATORS) as pool:
        list(pool.map(create_deployment, workload_names(count)))
    what = f"{count} pods Running"
    wait_until(all_running, timeout=60 + 0.5 * count, what=what, interval=POLL_SECONDS)
    wait_for_history(cluster, count)


def wait_for_history(cluster: local.LocalCluster, count: int) -> None:
    """Until Prometheus holds a little more of every pod's history than forecasting needs."""
    share, history = MAX_MISSING_SHARE + 0.1, parse_duration(HISTORY)
    samples = math.ceil(share * history / cluster.scrape_interval_seconds)
    series = f'container_cpu_usage_seconds_total{{namespace="{NAMESPACE}",container!=""}}'
    promql = f"count(count_over_time({series}[{HISTORY}]) >= {samples})"
    say(f"waiting until Prometheus holds {share:.0%} of their {HISTORY} history")

    def every_pod(found: list[Sample]) -> bool:
        return bool(found) and found[0].value >= count

    query_until(cluster.prometheus_url, promql, every_pod, timeout=history + 300, interval=5.0)


def create_scalers(custom: client.CustomObjectsApi, count: int, sync_period: str) -> float:
    """The first `count` workloads' PredictiveScalers; returns the seconds it took."""

    def create(name: str) -> None:
        body = scaler(name, sync_period)
        custom.create_namespaced_custom_object(GROUP, VERSION, NAMESPACE, PLURAL, body)

    began = time.perf_counter()
    with ThreadPoolExecutor(CREATORS) as pool:
        list(pool.map(create, workload_names(count)))
    return time.perf_counter() - began


def say(text: str) -> None:
    print(f"==> {text}", flush=True)


def run_count(
    cluster: local.LocalCluster, api: client.ApiClient, count: int, options: Options
) -> LoadResult:
    custom = client.CustomObjectsApi(api)
    with cleanup_that_finishes() as cleanup:
        env = {"PREDICTIVE_SCALER_REBALANCE_MODE": "Off"}
        env["PREDICTIVE_SCALER_FORECAST_WORKERS"] = str(options.workers)
        log = options.logs / f"operator-{count}.log"
        operator = OperatorProcess(cluster, NAMESPACE, log, extra_env=env)
        cleanup.callback(cluster.remove_scrape_target, SCRAPE_TARGET)
        cleanup.callback(operator.stop)
        # Registered last, so it runs first: the objects go while the operator still runs.
        cleanup.callback(delete_scalers, custom, operator, count)
        creation = create_scalers(custom, count, options.sync_period)
        launched = time.monotonic()
        operator.start()
        cluster.add_scrape_target(SCRAPE_TARGET, f"127.0.0.1:{operator.metrics_port}")
        say(f"{count} PredictiveScalers; operator pid {operator.pid}, log {log}")

        def all_evaluated() -> bool:
            if not operator.running():
                raise OperatorExitedError(operator.log_tail())
            times = [evaluated_at(status) for status in scaler_statuses(custom).values()]
            return len(times) == count and None not in times

        what = f"a first evaluation of all {count} objects"
        wait_until(all_evaluated, timeout=120 + 0.5 * count, what=what, interval=POLL_SECONDS)
        first_evaluation = time.monotonic() - launched
        say(f"all evaluated after {first_evaluation:.1f} s; measuring {options.cycles} periods")
        return measure(custom, operator, options, creation, first_evaluation)


def measure(
    custom: client.CustomObjectsApi,
    operator: OperatorProcess,
    options: Options,
    creation: float,
    first_evaluation: float,
) -> LoadResult:
    """Poll the objects and the operator process every POLL_SECONDS for `cycles` sync periods."""
    sync_seconds = parse_duration(options.sync_period)
    deadline = time.monotonic() + sync_seconds * options.cycles
    before = parse_metrics(operator.metrics_text())
    samples = [sample_process(operator.pid)]
    seen: dict[str, set[float]] = defaultdict(set)
    statuses: dict[str, dict[str, Any]] = {}
    while samples[-1].at < deadline:
        if not operator.running():
            raise OperatorExitedError(operator.log_tail())
        # A sampling cadence, not a synchronisation: each turn records what it finds.
        time.sleep(max(0.0, min(POLL_SECONDS, deadline - time.monotonic())))
        statuses = scaler_statuses(custom)
        for name, status in statuses.items():
            if (at := evaluated_at(status)) is not None:
                seen[name].add(at)
        samples.append(sample_process(operator.pid))
    after = parse_metrics(operator.metrics_text())
    window = {key: value - before.get(key, 0.0) for key, value in after.items()}
    gaps, within = gaps_and_share_on_time(seen, time.time(), sync_seconds * ON_TIME)
    elapsed = samples[-1].at - samples[0].at
    object_cycles = len(seen) * elapsed / sync_seconds
    by_kind = {
        f"{dict(labels).get('verb')} {dict(labels).get('resource')}": value / object_cycles
        for (name, labels), value in window.items()
        if name == API_COUNTER
    }
    return LoadResult(
        objects=len(seen),
        creation_seconds=creation,
        first_evaluation_seconds=first_evaluation,
        evaluations=int(window.get((f"{HISTOGRAM}_count", frozenset()), 0)),
        evaluation_seconds=tuple(
            histogram_quantile(window, f"{HISTOGRAM}_bucket", q) for q in (0.5, 0.95, 0.99)
        ),
        gap_seconds=(*np.percentile(gaps or [math.nan], (50, 95, 99)), max(gaps, default=math.nan)),
        within_interval=within,
        forecasting=sum("forecast" in status for status in statuses.values()) / len(seen),
        api_by_kind=by_kind,
        peak_rss_mib=samples[-1].peak_rss_kib / 1024,
        mean_rss_mib=float(np.mean([s.rss_kib for s in samples])) / 1024,
        cpu_cores=(samples[-1].cpu_seconds - samples[0].cpu_seconds) / elapsed,
    )


def figures(values: Sequence[float], scale: float, unit: str) -> str:
    return " / ".join("n/a" if math.isnan(v) else f"{v * scale:.0f}" for v in values) + f" {unit}"


def row(result: LoadResult) -> dict[str, str]:
    """One table row, by column header."""
    api = result.api_per_object_cycle
    return {
        "objects": f"{result.objects:,}",
        "creation": format_seconds(result.creation_seconds),
        "first evaluation of all": format_seconds(result.first_evaluation_seconds),
        "evaluations in window": f"{result.evaluations:,}",
        "evaluation p50 / p95 / p99": figures(result.evaluation_seconds, 1e3, "ms"),
        "gap between evaluations p50 / p95 / p99 / max": figures(result.gap_seconds, 1, "s"),
        "within interval": f"{result.within_interval:.0%}",
        "forecasting": f"{result.forecasting:.0%}",
        "API requests per object per cycle": "n/a" if api is None else f"{api:.1f}",
        "peak RSS": f"{result.peak_rss_mib:.0f} MiB",
        "mean RSS": f"{result.mean_rss_mib:.0f} MiB",
        "CPU": f"{result.cpu_cores:.2f} cores",
    }


def results_table(results: Sequence[LoadResult]) -> list[str]:
    return table(list(row(results[0])), [list(row(result).values()) for result in results])


def scaling_curve(results: Sequence[LoadResult]) -> str:
    if len(results) < 2:
        return "One count only, so no scaling curve."
    small, large = results[0], results[-1]
    per_added = (large.peak_rss_mib - small.peak_rss_mib) * 1024 / (large.objects - small.objects)
    return (
        f"From {small.objects:,} to {large.objects:,} objects, peak RSS grows from "
        f"{small.peak_rss_mib:.0f} to {large.peak_rss_mib:.0f} MiB ({per_added:.0f} KiB per "
        f"added object) and CPU from {small.cpu_cores:.2f} to {large.cpu_cores:.2f} cores "
        f"({small.cpu_cores * 1e3 / small.objects:.1f} millicores per object at "
        f"{small.objects:,}, {large.cpu_cores * 1e3 / large.objects:.1f} at {large.objects:,})."
    )


def render(results: Sequence[LoadResult], args: argparse.Namespace, notes: str) -> str:
    largest = results[-1]
    kinds = [[k, f"{v:.2f}"] for k, v in sorted(largest.api_by_kind.items(), key=lambda i: -i[1])]
    method = (
        "On the local control plane (API server, etcd, kwok nodes, Prometheus scraping every "
        f"2 s), {CREATORS} threads first create {largest.objects:,} one-pod Deployments in "
        f"`{NAMESPACE}` (10m CPU requested, {POD_USAGE} used through kwok's usage annotation), "
        f"and the run waits until Prometheus holds {MAX_MISSING_SHARE + 0.1:.0%} of their "
        f"{HISTORY} history: below {MAX_MISSING_SHARE:.0%} the operator holds with "
        "MissingMetrics and fits no model. For each count N, the threads then create N "
        "PredictiveScalers on the first N Deployments (Auto, CPU, targetPerReplica 500m, 1 to 3 "
        f"replicas, syncPeriod {args.sync_period}, holt on {HISTORY} of history at 30s steps, "
        "refresh 10m, leadTime 60s); creation is their wall time. One `predictive-scaler run` "
        f"({args.workers} forecast workers, rebalancing off) is started on the namespace; first "
        "evaluation of all runs from its launch until every object has "
        f"`status.lastEvaluationTime`. Over the next {args.cycles} sync periods the objects are "
        f"listed every {POLL_SECONDS:g} s: each object's successive `lastEvaluationTime` values "
        "(1 s resolution) give its gaps, and it is within its interval when every gap, and the "
        "time from its last evaluation to the window's end, is at most the sync period + "
        f"{ON_TIME - 1:.0%}. Forecasting is the share of objects whose last status carried a "
        f"forecast. Evaluation duration (queueing for a worker included) comes from the "
        f"operator's `{HISTOGRAM}` buckets over the window, interpolated as `histogram_quantile` "
        f"does. API requests are `{API_COUNTER}` over the window (the operator's own client; "
        "kopf's watches are not counted). Peak RSS is VmHWM since launch; mean RSS and CPU "
        "(utime + stime) are over the window. The PredictiveScalers are deleted, and the "
        "operator stopped, between counts."
    )
    return "\n".join(
        [
            "## Operator load: one operator, many PredictiveScalers",
            "",
            f"- Date: {datetime.date.today().isoformat()}; {notes}",
            f"- Machine: {machine_description()}",
            f"- Reproduce: `.venv/bin/python -m benchmarks.operator_load --counts {args.counts} "
            f"--sync-period {args.sync_period} --cycles {args.cycles} --workers {args.workers}`",
            "",
            "### Method",
            "",
            method,
            "",
            *results_table(results),
            "",
            scaling_curve(results),
            "",
            f"### API requests per object per cycle, {largest.objects:,} objects",
            "",
            *(table(("verb resource", "requests"), kinds) if kinds else [f"n/a: no {API_COUNTER}"]),
            "",
        ]
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--counts", default="10,100,300,1000", help="object counts, commas")
    parser.add_argument("--sync-period", default="60s", help="spec.syncPeriod of every object")
    parser.add_argument("--cycles", type=int, default=3, help="sync periods measured per count")
    parser.add_argument("--workers", type=int, default=4, help="the operator's forecast workers")
    parser.add_argument("--output", type=Path, default=Path("BENCHMARKS.md"))
    args = parser.parse_args(argv)
    try:
        counts = sorted(int(count) for count in args.counts.split(","))
        parse_duration(args.sync_period)
    except ValueError as error:
        parser.error(str(error))
    logs = Path(tempfile.mkdtemp(prefix="operator-load-"))
    options = Options(args.sync_period, args.cycles, args.workers, logs)
    load_before, began = os.getloadavg()[0], time.perf_counter()
    results: list[LoadResult] = []
    restore_sigterm = interrupt_on_signals()
    try:
        with cleanup_that_finishes() as cleanup:
            started = local.up()
            if not started.reused:
                cleanup.callback(local.down, started.cluster.run_dir)
            say(f"local cluster {'reused' if started.reused else 'started'}; logs in {logs}")
            api = cleanup.enter_context(started.cluster.api())
            apply_crds(started.cluster)
            prepare_workloads(started.cluster, api, counts[-1], cleanup)
            for count in counts:
                results.append(run_count(started.cluster, api, count, options))
                print("\n".join(results_table(results[-1:])), flush=True)
    finally:
        restore_sigterm()
    minutes = (time.perf_counter() - began) / 60
    notes = f"the run took {minutes:.1f} min; load average {load_before:.2f} before, "
    section = render(results, args, notes + f"{os.getloadavg()[0]:.2f} after")
    print(section)
    write_section(args.output, "operator-load", section)


if __name__ == "__main__":
    main()
