"""A skewed kwok cluster for `benchmarks.peers`, built the same way for every copy.

Workloads are Deployments of a few replicas whose per-pod CPU and memory are
(VM, time) samples of the Google 2011 per-VM usage trace, scaled so the
cluster averages `MEAN_CPU_UTILISATION`. Their pods start on the first third
of the nodes only (the others are cordoned while they are created, as after a
rollout onto fresh nodes), and each has a PodDisruptionBudget of one. A
DaemonSet puts an agent with a little usage on every node, as real clusters
have: a node running nothing reports no usage, which metrics-server drops.

A keeper thread gives every new pod its workload's usage through kwok's
annotations, so a moved pod carries its load to its new node. After every
cycle `settle` waits until the moved pods run and both metrics-server and
Prometheus report each node's usage as the pods on it add up to.
"""

from __future__ import annotations

import math
import threading
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from kubernetes import client
from kubernetes.client.exceptions import ApiException

import predictive_scaler_dev.localcluster as local
from benchmarks.report import REPO_TRACES
from predictive_scaler.operator.resource import quantity
from predictive_scaler.promclient import instant_query
from predictive_scaler.traces import trace_rows
from predictive_scaler_dev.localcluster.kube import (
    USAGE_CPU_ANNOTATION,
    create_namespace,
    deployment_manifest,
    set_pod_usage,
)
from predictive_scaler_dev.localcluster.waiting import wait_until

NAMESPACE = "peers"
AGENT_NAMESPACE = "peers-agents"
NODE_CORES, NODE_GIB = 16.0, 64.0
PODS_PER_NODE = 8
REPLICAS = 4
MEAN_CPU_UTILISATION = 0.35
AGENT_CPU, AGENT_GIB = 0.1, 0.125
SETTLE_SECONDS = 180.0
# Both metric paths average over a window and refresh every few seconds: a
# node counts as read right when within this share of what its pods add up to.
READ_TOLERANCE = 0.1


@dataclass(frozen=True)
class Workload:
    name: str
    cpu: float  # cores per pod
    memory: float  # GiB per pod


def workloads(nodes: int, seed: int) -> list[Workload]:
    """Per-pod usage from the Google trace's samples, scaled to the cluster's mean."""
    rows = trace_rows(REPO_TRACES / "google_2011_vm_usage_5min.csv.gz")
    samples = np.asarray([(float(r["cpu_percent"]), float(r["mem_percent"])) for r in rows])
    count = nodes * PODS_PER_NODE // REPLICAS
    picks = samples[np.random.default_rng(seed).integers(0, len(samples), count)]
    # CPU and memory each average the same share of the cluster, in the trace's
    # proportions from workload to workload.
    wanted_cpu = MEAN_CPU_UTILISATION * nodes * NODE_CORES - nodes * AGENT_CPU
    wanted_memory = MEAN_CPU_UTILISATION * nodes * NODE_GIB - nodes * AGENT_GIB
    cpu = picks[:, 0] / picks[:, 0].sum() * wanted_cpu / REPLICAS
    memory = picks[:, 1] / picks[:, 1].sum() * wanted_memory / REPLICAS
    return [
        Workload(f"app-{i}", round(float(c), 3), round(float(m), 3))
        for i, (c, m) in enumerate(zip(cpu, memory, strict=True))
    ]


def _agents() -> dict[str, Any]:
    labels = {"app": "node-agent"}
    pod = deployment_manifest("node-agent", 1)["spec"]["template"]
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "node-agent", "labels": labels},
        "spec": {"selector": {"matchLabels": labels}, "template": pod},
    }


def _budget(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name},
        "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": name}}},
    }


@dataclass
class UsageKeeper:
    """Sets each pod's annotated usage from its workload, every second, until stopped."""

    core: client.CoreV1Api
    usage: dict[tuple[str, str], tuple[float, float]]  # (namespace, app) -> cores, GiB
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="usage-keeper", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _run(self) -> None:
        while not self._stop.wait(1.0):
            for namespace in {ns for ns, _ in self.usage}:
                try:
                    self.annotate(namespace)
                except ApiException:
                    continue  # a pod deleted mid-list: the next round sees the rest

    def annotate(self, namespace: str) -> int:
        """Annotate the pods still missing their usage; how many are still missing."""
        missing = 0
        for pod in self.core.list_namespaced_pod(namespace).items:
            meta = pod.metadata
            if meta is None or meta.deletion_timestamp is not None:
                continue
            if USAGE_CPU_ANNOTATION in (meta.annotations or {}):
                continue
            cores, gib = self.usage[(namespace, (meta.labels or {}).get("app", ""))]
            missing += 1
            set_pod_usage(
                self.core, namespace, str(meta.name), cpu=f"{round(cores * 1000)}m",
                memory=f"{round(gib * 1024)}Mi",
            )  # fmt: skip
        return missing


def node_truth(
    core: client.CoreV1Api, usage: dict[tuple[str, str], tuple[float, float]]
) -> dict[str, tuple[float, float]]:
    """Each node's usage as the running pods on it add up to: cores, GiB."""
    total: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for pod in core.list_pod_for_all_namespaces(field_selector="status.phase=Running").items:
        meta, spec = pod.metadata, pod.spec
        if meta is None or spec is None or meta.deletion_timestamp is not None:
            continue
        key = (str(meta.namespace), (meta.labels or {}).get("app", ""))
        if key in usage and spec.node_name:
            total[spec.node_name][0] += usage[key][0]
            total[spec.node_name][1] += usage[key][1]
    return {node: (cpu, memory) for node, (cpu, memory) in total.items()}


def _close(read: float, truth: float) -> bool:
    return math.isclose(read, truth, rel_tol=READ_TOLERANCE)


def _metrics_server_agrees(api: client.ApiClient, truth: dict[str, tuple[float, float]]) -> bool:
    listed: Any = client.CustomObjectsApi(api).list_cluster_custom_object(
        "metrics.k8s.io", "v1beta1", "nodes"
    )
    read = {item["metadata"]["name"]: item["usage"] for item in listed["items"]}
    return all(
        node in read and _close(quantity(read[node]["cpu"]), cpu)
        for node, (cpu, _) in truth.items()
    )


def _prometheus_agrees(url: str, truth: dict[str, tuple[float, float]], window: str) -> bool:
    found = instant_query(url, f"sum by (node) (rate(node_cpu_usage_seconds_total[{window}]))")
    read = {sample.labels.get("node"): sample.value for sample in found}
    return all(node in read and _close(read[node], cpu) for node, (cpu, _) in truth.items())


@dataclass
class SkewedCluster:
    cluster: local.LocalCluster
    api: client.ApiClient
    specs: list[Workload]
    usage: dict[tuple[str, str], tuple[float, float]] = field(default_factory=dict)
    keeper: UsageKeeper | None = None

    @property
    def core(self) -> client.CoreV1Api:
        return client.CoreV1Api(self.api)

    def build(self, nodes: list[str]) -> None:
        core, apps = self.core, client.AppsV1Api(self.api)
        policy = client.PolicyV1Api(self.api)
        hot = nodes[: max(1, len(nodes) // 3)]
        for namespace in (NAMESPACE, AGENT_NAMESPACE):
            create_namespace(core, namespace)
        self.usage = {(NAMESPACE, w.name): (w.cpu, w.memory) for w in self.specs}
        self.usage[(AGENT_NAMESPACE, "node-agent")] = (AGENT_CPU, AGENT_GIB)
        self.keeper = UsageKeeper(core, self.usage)
        self.keeper.start()
        apps.create_namespaced_daemon_set(AGENT_NAMESPACE, _agents())  # type: ignore[arg-type]
        cordoned = [n for n in nodes if n not in hot]
        self._cordon(cordoned, True)
        for workload in self.specs:
            body = deployment_manifest(workload.name, REPLICAS, cpu_request="100m")
            apps.create_namespaced_deployment(NAMESPACE, body)  # type: ignore[arg-type]
            budget = _budget(workload.name)
            policy.create_namespaced_pod_disruption_budget(NAMESPACE, budget)  # type: ignore[arg-type]
        wait_until(
            lambda: self._running(NAMESPACE) == len(self.specs) * REPLICAS,
            timeout=SETTLE_SECONDS,
            what="every workload's pods Running on the hot nodes",
        )
        self._cordon(cordoned, False)

    def _cordon(self, nodes: list[str], unschedulable: bool) -> None:
        for node in nodes:
            self.core.patch_node(node, {"spec": {"unschedulable": unschedulable}})

    def _running(self, namespace: str) -> int:
        pods = self.core.list_namespaced_pod(namespace, field_selector="status.phase=Running")
        return sum(1 for p in pods.items if p.metadata and p.metadata.deletion_timestamp is None)

    def settled(self) -> bool:
        """Every pod replaced and running, annotated, and each node read as it truly is."""
        expected = len(self.specs) * REPLICAS
        listed = len(self.core.list_namespaced_pod(NAMESPACE).items)
        if self._running(NAMESPACE) != expected or listed != expected:
            return False
        assert self.keeper is not None
        if self.keeper.annotate(NAMESPACE) or self.keeper.annotate(AGENT_NAMESPACE):
            return False
        truth = node_truth(self.core, self.usage)
        window = f"{4 * self.cluster.scrape_interval_seconds:g}s"
        return _metrics_server_agrees(self.api, truth) and _prometheus_agrees(
            self.cluster.prometheus_url, truth, window
        )

    def settle(self) -> None:
        wait_until(self.settled, timeout=SETTLE_SECONDS, what="pods replaced and usage read")

    def stop(self) -> None:
        if self.keeper is not None:
            self.keeper.stop()
