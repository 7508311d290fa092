"""Plan evictions off the hottest nodes onto cooler ones that would take the pods.

While the top of the high-load heap is below the score threshold, take a pod
from it (lowest priority first, then the one nearest its CPU limit, then the
one whose move lowers the degree most), find the low-load node that passes the
scheduler's basic predicates and leaves the cluster most balanced, apply the
move to both nodes' usage and go on, within per-node, per-workload and
per-cycle limits. Moving usage between nodes leaves the cluster means
unchanged, so only the two nodes' scores need recomputing per move.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from predictive_scaler.rebalancing.cooldown import Cooling
from predictive_scaler.rebalancing.nodes import (
    DegreeTracker,
    LoadHeaps,
    NodeLoad,
    ScoringConfig,
    cluster_means,
    node_score,
)
from predictive_scaler.rebalancing.pods import NodeInfo, PodInfo, seconds_to_limit, why_not_movable
from predictive_scaler.rebalancing.predicates import why_not_fits
from predictive_scaler.refs import PodRef, WorkloadRef


@dataclass(frozen=True)
class Limits:
    per_node: int = 2
    per_workload: int = 1
    per_cycle: int = 10
    # Destinations examined per candidate pod, coolest first, once they pass the predicates.
    destinations: int = 8
    # Pods of one hot node whose moves are costed, taken in priority and urgency order.
    candidates: int = 8


NOTHING_COOLING = Cooling()


@dataclass(frozen=True)
class Move:
    pod: PodRef
    workload: WorkloadRef
    source: str
    destination: str
    degree_after: float


@dataclass(frozen=True)
class Skipped:
    pod: PodRef
    node: str
    reason: str


@dataclass(frozen=True)
class Plan:
    moves: tuple[Move, ...]
    skipped: tuple[Skipped, ...]
    degree_before: float
    degree_after: float
    scores_before: Mapping[str, float]
    scores_after: Mapping[str, float]


@dataclass
class _Cluster:
    nodes: dict[str, NodeInfo]
    loads: dict[str, NodeLoad]
    requested: dict[str, dict[str, float]]
    residents: dict[str, list[PodInfo]]
    # Residents with a required anti-affinity of their own: the only ones a pod
    # without anti-affinity has to be checked against.
    guarded: dict[str, list[PodInfo]]
    scores: dict[str, float]
    degree: DegreeTracker
    means: Mapping[str, float]
    config: ScoringConfig
    moved_from: Counter[str] = field(default_factory=Counter)
    moved_workloads: Counter[WorkloadRef | None] = field(default_factory=Counter)

    def score_with(self, name: str, delta: Mapping[str, float]) -> float:
        return node_score(self.loads[name].moved(delta), self.means, self.config.weights)

    def apply(self, pod: PodInfo, destination: str) -> None:
        source = pod.node
        taken = {m: -v for m, v in pod.usage.items()}
        self.loads[source] = self.loads[source].moved(taken)
        self.loads[destination] = self.loads[destination].moved(pod.usage)
        for resource, amount in pod.requests.items():
            self.requested[source][resource] = self.requested[source].get(resource, 0.0) - amount
            self.requested[destination][resource] = (
                self.requested[destination].get(resource, 0.0) + amount
            )
        self.requested[source]["pods"] -= 1
        self.requested[destination]["pods"] = self.requested[destination].get("pods", 0.0) + 1
        self.residents[source].remove(pod)
        self.residents[destination].append(pod)
        if pod.anti_affinity:
            self.guarded[source].remove(pod)
            self.guarded[destination].append(pod)
        for name in (source, destination):
            new = node_score(self.loads[name], self.means, self.config.weights)
            self.degree = self.degree.replaced(self.scores[name], new)
            self.scores[name] = new
        self.moved_from[source] += 1
        self.moved_workloads[pod.workload] += 1


def _build(nodes: Sequence[NodeInfo], pods: Sequence[PodInfo], config: ScoringConfig) -> _Cluster:
    loads = {n.name: n.load for n in nodes}
    requested: dict[str, dict[str, float]] = {n.name: {"pods": 0.0} for n in nodes}
    residents: dict[str, list[PodInfo]] = defaultdict(list)
    guarded: dict[str, list[PodInfo]] = defaultdict(list)
    for pod in pods:
        if pod.node not in requested:
            continue
        for resource, amount in pod.requests.items():
            requested[pod.node][resource] = requested[pod.node].get(resource, 0.0) + amount
        requested[pod.node]["pods"] += 1
        residents[pod.node].append(pod)
        if pod.anti_affinity:
            guarded[pod.node].append(pod)
    means = cluster_means(loads.values(), config.weights)
    scores = {name: node_score(load, means, config.weights) for name, load in loads.items()}
    return _Cluster(
        {n.name: n for n in nodes},
        loads,
        requested,
        residents,
        guarded,
        scores,
        DegreeTracker.of(list(scores.values())),
        means,
        config,
    )


def _best_destination(
    cluster: _Cluster, pod: PodInfo, coolest: Sequence[str], limits: Limits, cooling: Cooling
) -> tuple[str, float] | None:
    """The destination leaving the lowest degree, among the first that take the pod."""
    source = pod.node
    taken = {m: -v for m, v in pod.usage.items()}
    source_after = cluster.score_with(source, taken)
    now = cluster.degree.value()
    best: tuple[str, float] | None = None
    examined = 0
    for name in coolest:
        if name == source or name in cooling.nodes:
            continue
        residents = cluster.residents[name] if pod.anti_affinity else cluster.guarded[name]
        if why_not_fits(pod, cluster.nodes[name], cluster.requested[name], residents):
            continue
        examined += 1
        destination_after = cluster.score_with(name, pod.usage)
        # The destination must stay low-load and cooler than the source leaves,
        # or the next cycle would move the pod back.
        if destination_after >= cluster.config.threshold and destination_after > source_after:
            degree = (
                cluster.degree.replaced(cluster.scores[source], source_after)
                .replaced(cluster.scores[name], destination_after)
                .value()
            )
            if degree < now and (best is None or degree < best[1]):
                best = (name, degree)
        if examined >= limits.destinations:
            break
    return best


def _movable(
    cluster: _Cluster,
    source: str,
    limits: Limits,
    *,
    cooling: Cooling,
    skipped: list[Skipped],
    allow_local_storage: bool,
) -> list[tuple[int, float, float, PodRef, PodInfo]]:
    """The source's pods that may move, in move order; the others go to `skipped` with why."""
    movable = []
    for pod in cluster.residents[source]:
        reason = why_not_movable(pod, allow_local_storage=allow_local_storage)
        if reason is None and (pod.ref in cooling.pods or pod.workload in cooling.workloads):
            reason = "CoolDown"
        if reason is None and pod.ref in cooling.refused:
            reason = "RecentlyRefused"
        if reason is None and cluster.moved_workloads[pod.workload] >= limits.per_workload:
            reason = "WorkloadLimit"
        if reason is None:
            urgency = seconds_to_limit(pod)
            movable.append((pod.priority, urgency, -pod.usage.get("cpu", 0.0), pod.ref, pod))
        else:
            skipped.append(Skipped(pod.ref, source, reason))
    return sorted(movable)


def plan_moves(
    nodes: Sequence[NodeInfo],
    pods: Sequence[PodInfo],
    config: ScoringConfig,
    limits: Limits = Limits(),
    *,
    cooling: Cooling = NOTHING_COOLING,
    allow_local_storage: bool = False,
) -> Plan:
    """Moves that lower the load-balance degree; nothing in ``cooling`` takes part."""
    cluster = _build(nodes, pods, config)
    scores_before = dict(cluster.scores)
    degree_before = cluster.degree.value()
    heaps = LoadHeaps.split(cluster.scores, config.threshold)
    moves: list[Move] = []
    skipped: list[Skipped] = []
    while len(moves) < limits.per_cycle and (hottest := heaps.pop_hottest()) is not None:
        source, score = hottest
        if score != cluster.scores[source]:
            continue  # stale entry: the node was re-scored and placed again
        if source in cooling.nodes or cluster.moved_from[source] >= limits.per_node:
            continue
        coolest = [name for name, _ in heaps.coolest()]
        movable = _movable(
            cluster,
            source,
            limits,
            cooling=cooling,
            skipped=skipped,
            allow_local_storage=allow_local_storage,
        )
        options = []
        for priority, urgency, _, key, pod in movable[: limits.candidates]:
            found = _best_destination(cluster, pod, coolest, limits, cooling)
            if found is None:
                skipped.append(Skipped(key, source, "NoDestination"))
            else:
                options.append((priority, urgency, found[1], key, pod, found[0]))
        if not options:
            continue
        _, _, degree, _, pod, destination = min(options, key=lambda o: o[:4])
        cluster.apply(pod, destination)
        assert pod.workload is not None  # a bare pod is never movable
        moves.append(Move(pod.ref, pod.workload, source, destination, degree))
        for moved in (source, destination):
            heaps.rescore(moved, cluster.scores[moved])
    return Plan(
        tuple(moves),
        tuple(skipped),
        degree_before,
        cluster.degree.value(),
        scores_before,
        dict(cluster.scores),
    )
