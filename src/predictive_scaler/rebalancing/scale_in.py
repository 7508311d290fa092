"""Which replicas go first on scale-in, so that the nodes stay balanced.

For each replica of the target, take its usage off its node and look at what
is left: how evenly the cluster's nodes are then used (cluster balance: the
spread of node utilisation, so replicas on the busiest nodes go first) and how
unevenly that node's own resources are used (multi-resource balance: a node
using much CPU but little memory strands its memory). Replicas whose removal
leaves the most even cluster, then the least stranded node, get the lowest
`controller.kubernetes.io/pod-deletion-cost`, so the ReplicaSet removes them first.

Utilisation, not the rebalancer's log-ratio score, is the measure here: the
score moves most on nearly idle nodes, which would make the lightest nodes
look like the best place to remove load from.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

from predictive_scaler.rebalancing.nodes import DegreeTracker, NodeLoad, ScoringConfig
from predictive_scaler.rebalancing.pods import PodInfo
from predictive_scaler.refs import PodRef

DELETION_COST_ANNOTATION = "controller.kubernetes.io/pod-deletion-cost"


def stranded(node: NodeLoad, metrics: Sequence[str]) -> float:
    """Spread of the node's utilisation across metrics: 0 when every resource is used alike."""
    used = [node.utilisation(m) for m in metrics if node.capacity.get(m, 0.0) > 0]
    return statistics.pstdev(used) if len(used) > 1 else 0.0


def _utilisation(node: NodeLoad, weights: Mapping[str, float]) -> float:
    """Weighted mean utilisation over the metrics the node has a capacity for."""
    used = [
        (w, node.utilisation(m))
        for m, w in weights.items()
        if w > 0 and node.capacity.get(m, 0.0) > 0
    ]
    total = sum(w for w, _ in used)
    return sum(w * u for w, u in used) / total if total > 0 else 0.0


def deletion_costs(
    replicas: Sequence[PodInfo], nodes: Sequence[NodeLoad], config: ScoringConfig
) -> dict[PodRef, int]:
    """Each pod's deletion cost (0 for the replica to remove first, then 1, 2, ...)."""
    loads = {n.name: n for n in nodes}
    current = {name: _utilisation(load, config.weights) for name, load in loads.items()}
    spread = DegreeTracker.of(list(current.values()))
    metrics = [m for m, w in config.weights.items() if w > 0]
    ranked: list[tuple[float, float, PodRef]] = []
    for pod in replicas:
        node = loads.get(pod.node)
        if node is None:
            # Not on a known node (pending): removing it strands nothing, so it goes first.
            ranked.append((-1.0, -1.0, pod.ref))
            continue
        after = node.moved({m: -v for m, v in pod.usage.items()})
        balance = spread.replaced(current[node.name], _utilisation(after, config.weights)).value()
        # Rounded, so float noise does not decide between equally balanced choices.
        ranked.append((round(balance, 9), stranded(after, metrics), pod.ref))
    return {key: rank for rank, (_, _, key) in enumerate(sorted(ranked))}


def deletion_cost_annotations(costs: Mapping[PodRef, int]) -> dict[PodRef, dict[str, str]]:
    """Each pod's metadata.annotations patch that carries its cost."""
    return {key: {DELETION_COST_ANNOTATION: str(cost)} for key, cost in costs.items()}
