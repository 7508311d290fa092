"""Adapter: the cluster's nodes and pods, with their real usage, as the rebalancer's plain values.

Usage comes from the operator's metric source (:mod:`.sources`); capacity from
each node's allocatable.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kubernetes import client

from predictive_scaler.operator.resource import quantity
from predictive_scaler.operator.sources import CPU, MEMORY, MetricSource, Usage
from predictive_scaler.rebalancing.nodes import NodeLoad
from predictive_scaler.rebalancing.pods import NodeInfo, PodInfo, Requirement, Taint, Toleration
from predictive_scaler.rebalancing.projection import projected_usage
from predictive_scaler.refs import WorkloadRef

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
HOSTNAME = "kubernetes.io/hostname"


def _quantities(values: Mapping[str, str] | None, names: Iterable[str]) -> dict[str, float]:
    found = values or {}
    return {name: quantity(str(found[name])) for name in names if name in found}


def node_info(node: client.V1Node, usage: Mapping[str, float]) -> NodeInfo:
    assert node.metadata is not None
    name = str(node.metadata.name)
    allocatable = _quantities(
        node.status.allocatable if node.status else None, ("cpu", "memory", "pods")
    )
    capacity: dict[str, float] = {m: allocatable[m] for m in ("cpu", "memory") if m in allocatable}
    taints = tuple(
        Taint(t.key, t.value or "", t.effect)  # type: ignore[arg-type]
        for t in ((node.spec.taints if node.spec else None) or [])
        if t.effect in ("NoSchedule", "PreferNoSchedule", "NoExecute")
    )
    return NodeInfo(
        NodeLoad(name, capacity, dict(usage)),
        allocatable,
        labels=dict(node.metadata.labels or {}),
        taints=taints,
        unschedulable=bool(node.spec and node.spec.unschedulable),
    )


@dataclass(frozen=True)
class Owners:
    """Which workload owns each ReplicaSet: its controller, of whatever kind.

    A Deployment owns its ReplicaSets, and so does an Argo Rollout; a pod's
    workload is then that owner, so a PredictiveScaler on the Rollout opts its
    pods in. A pod whose controller is any other kind (a StatefulSet, a
    custom resource that creates pods itself) belongs to that controller.
    """

    replica_sets: Mapping[tuple[str, str], WorkloadRef]

    @classmethod
    def from_replica_sets(cls, replica_sets: Iterable[client.V1ReplicaSet]) -> Owners:
        owners = {}
        for rs in replica_sets:
            meta = rs.metadata
            if meta is None:
                continue
            parent = next((r for r in (meta.owner_references or []) if r.controller), None)
            kind, name = (parent.kind, parent.name) if parent else ("ReplicaSet", meta.name)
            owners[(str(meta.namespace), str(meta.name))] = WorkloadRef(
                str(meta.namespace), kind, str(name)
            )
        return cls(owners)

    def workload(self, pod: client.V1Pod) -> tuple[WorkloadRef | None, str | None]:
        """(workload, kind of the pod's direct controller); (None, None) for a bare pod."""
        assert pod.metadata is not None
        controller = next((r for r in (pod.metadata.owner_references or []) if r.controller), None)
        if controller is None:
            return None, None
        namespace = str(pod.metadata.namespace)
        if controller.kind == "ReplicaSet":
            owner = self.replica_sets.get((namespace, controller.name))
            return owner or WorkloadRef(namespace, "ReplicaSet", controller.name), "ReplicaSet"
        return WorkloadRef(namespace, controller.kind, controller.name), controller.kind


def _requests(pod: client.V1Pod, field: str) -> dict[str, float]:
    total: dict[str, float] = {}
    for container in (pod.spec.containers if pod.spec else None) or []:
        resources = container.resources
        values = getattr(resources, field, None) if resources else None
        for name, amount in _quantities(values, ("cpu", "memory")).items():
            total[name] = total.get(name, 0.0) + amount
    return total


def _affinity(
    pod: client.V1Pod,
) -> tuple[tuple[tuple[Requirement, ...], ...], tuple[dict[str, str], ...]]:
    affinity = pod.spec.affinity if pod.spec else None
    terms: list[tuple[Requirement, ...]] = []
    node = affinity.node_affinity if affinity else None
    required = node.required_during_scheduling_ignored_during_execution if node else None
    for term in (required.node_selector_terms if required else None) or []:
        terms.append(
            tuple(
                Requirement(e.key, e.operator, tuple(e.values or ()))  # type: ignore[arg-type]
                for e in (term.match_expressions or [])
                # Gt/Lt (numeric) are rare: the scheduler still checks them.
                if e.operator in ("In", "NotIn", "Exists", "DoesNotExist")
            )
        )
    anti: list[dict[str, str]] = []
    pod_anti = affinity.pod_anti_affinity if affinity else None
    required_anti = (
        pod_anti.required_during_scheduling_ignored_during_execution if pod_anti else None
    )
    for anti_term in required_anti or []:
        if anti_term.topology_key == HOSTNAME and anti_term.label_selector is not None:
            anti.append(dict(anti_term.label_selector.match_labels or {}))
    return tuple(terms), tuple(anti)


def pod_info(
    pod: client.V1Pod,
    owners: Owners,
    usage: Mapping[str, float],
    opted_in: frozenset[WorkloadRef],
) -> PodInfo:
    assert pod.metadata is not None
    assert pod.spec is not None
    workload, kind = owners.workload(pod)
    terms, anti = _affinity(pod)
    volumes = pod.spec.volumes or []
    return PodInfo(
        name=str(pod.metadata.name),
        namespace=str(pod.metadata.namespace),
        node=str(pod.spec.node_name or ""),
        workload=workload,
        owner_kind=kind,
        priority=int(pod.spec.priority or 0),
        requests=_requests(pod, "requests"),
        usage=dict(usage),
        limits=_requests(pod, "limits"),
        labels=dict(pod.metadata.labels or {}),
        node_selector=dict(pod.spec.node_selector or {}),
        affinity_terms=terms,
        tolerations=tuple(
            Toleration(
                t.key or "",
                "Exists" if t.operator == "Exists" else "Equal",
                t.value or "",
                t.effect or "",
            )
            for t in pod.spec.tolerations or []
        ),
        anti_affinity=anti,
        mirror=MIRROR_ANNOTATION in (pod.metadata.annotations or {}),
        terminating=pod.metadata.deletion_timestamp is not None,
        local_storage=any(v.empty_dir is not None or v.host_path is not None for v in volumes),
        opted_in=workload in opted_in,
    )


# Samples of each node's recent CPU that the look-ahead's forecast reads.
LOOKAHEAD_POINTS = 21
IDLE = {CPU: 0.0, MEMORY: 0.0}


def usage_ahead(source: MetricSource, lookahead: float, min_rate_window: float) -> Usage:
    """Usage now, a node's CPU counted at its forecast peak over ``lookahead`` (if above).

    A climbing node is drained before it is hot, and not chosen as a destination.
    """
    usage = source.usage()
    if lookahead <= 0:
        return usage
    step = max(min_rate_window, lookahead / 5)
    horizon = max(1, math.ceil(lookahead / step))
    nodes = {name: dict(measured) for name, measured in usage.nodes.items()}
    for name, values in source.node_cpu_history(step, LOOKAHEAD_POINTS).items():
        peak = projected_usage(list(values), horizon)
        if name in nodes and math.isfinite(peak):
            nodes[name][CPU] = max(nodes[name].get(CPU, 0.0), peak)
    return Usage(nodes, usage.pods)


def node_infos(
    nodes: Iterable[client.V1Node], usage: Usage, *, unmeasured_as_idle: bool = False
) -> list[NodeInfo]:
    """The nodes whose usage the source reports, with it.

    A node it does not report (new, its kubelet not scraped) is left out, not
    taken as idle: to the rebalancer an idle node drags the cluster's mean down,
    so every measured node looked hot and the unmeasured one the best
    destination, and pods were evicted from a balanced cluster. Its pods are
    left out with it. The scale-in ranking takes it as idle
    (``unmeasured_as_idle``): most often a new node, whose pods go last.
    """
    return [
        node_info(n, usage.nodes.get(str(n.metadata.name), IDLE))
        for n in nodes
        if n.metadata is not None and (unmeasured_as_idle or str(n.metadata.name) in usage.nodes)
    ]
