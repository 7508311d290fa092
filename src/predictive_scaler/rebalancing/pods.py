"""Pods and nodes as the planner sees them, which pods may move, and in what order.

Plain values built by the operator's adapter from the API objects and usage
metrics; nothing here talks to Kubernetes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from predictive_scaler.rebalancing.nodes import NodeLoad
from predictive_scaler.refs import PodRef, WorkloadRef

# Pods at or above this priority are system-critical (system-cluster-critical is 2e9).
SYSTEM_CRITICAL_PRIORITY = 2_000_000_000


@dataclass(frozen=True)
class Taint:
    key: str
    value: str = ""
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] = "NoSchedule"


@dataclass(frozen=True)
class Toleration:
    key: str = ""  # empty with Exists: tolerates every taint
    operator: Literal["Equal", "Exists"] = "Equal"
    value: str = ""
    effect: str = ""  # empty: every effect

    def tolerates(self, taint: Taint) -> bool:
        if self.effect and self.effect != taint.effect:
            return False
        if self.operator == "Exists":
            return not self.key or self.key == taint.key
        return self.key == taint.key and self.value == taint.value


@dataclass(frozen=True)
class Requirement:
    """One matchExpression of a required node-affinity term."""

    key: str
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist"]
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        if self.operator == "Exists":
            return present
        if self.operator == "DoesNotExist":
            return not present
        inside = present and labels[self.key] in self.values
        return inside if self.operator == "In" else not inside


@dataclass(frozen=True)
class PodInfo:
    name: str
    namespace: str
    node: str
    # The workload that owns the pod; None for a bare pod.
    workload: WorkloadRef | None
    owner_kind: str | None = None  # ReplicaSet, StatefulSet, DaemonSet, Job, ...
    priority: int = 0
    requests: Mapping[str, float] = field(default_factory=dict)
    usage: Mapping[str, float] = field(default_factory=dict)
    limits: Mapping[str, float] = field(default_factory=dict)
    # Recent CPU usage, oldest first, one sample per `history_step` seconds.
    cpu_history: tuple[float, ...] = ()
    history_step: float = 60.0
    labels: Mapping[str, str] = field(default_factory=dict)
    node_selector: Mapping[str, str] = field(default_factory=dict)
    # Required node affinity: any term may match; within a term every requirement must.
    affinity_terms: tuple[tuple[Requirement, ...], ...] = ()
    tolerations: tuple[Toleration, ...] = ()
    # Required pod anti-affinity on the node: pods with these labels may not share it.
    anti_affinity: tuple[Mapping[str, str], ...] = ()
    mirror: bool = False
    terminating: bool = False
    local_storage: bool = False
    opted_in: bool = False

    @property
    def ref(self) -> PodRef:
        return PodRef(self.namespace, self.name)


@dataclass(frozen=True)
class NodeInfo:
    load: NodeLoad
    allocatable: Mapping[str, float]  # cpu, memory, pods
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False

    @property
    def name(self) -> str:
        return self.load.name


def why_not_movable(pod: PodInfo, *, allow_local_storage: bool = False) -> str | None:
    """The reason a pod is never planned, or None when it may move."""
    refusals = (
        ("DaemonSetPod", pod.owner_kind == "DaemonSet"),
        ("MirrorPod", pod.mirror),
        ("BarePod", pod.workload is None),
        ("SystemCritical", pod.priority >= SYSTEM_CRITICAL_PRIORITY),
        ("Terminating", pod.terminating),
        ("LocalStorage", pod.local_storage and not allow_local_storage),
        ("NotOptedIn", not pod.opted_in),
    )
    return next((reason for reason, refused in refusals if refused), None)


def seconds_to_limit(pod: PodInfo) -> float:
    """When a linear fit of recent CPU usage reaches the CPU limit (inf: never, or no limit)."""
    limit = pod.limits.get("cpu")
    history = np.asarray(pod.cpu_history, dtype=float)
    history = history[np.isfinite(history)]
    if limit is None or limit <= 0 or history.size < 2:
        return math.inf
    slope, intercept = np.polyfit(np.arange(history.size, dtype=float), history, 1)
    now = intercept + slope * (history.size - 1)
    if now >= limit:
        return 0.0
    if slope <= 0:
        return math.inf
    return float((limit - now) / slope * pod.history_step)
