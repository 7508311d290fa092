"""The scheduler's basic predicates, so a planned destination would really take the pod.

Requests fit in allocatable, nodeSelector and required node affinity,
taints and tolerations, unschedulable nodes, and required pod anti-affinity.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from predictive_scaler.rebalancing.pods import NodeInfo, PodInfo

REQUEST_TOLERANCE = 1e-9


def _matches(selector: Mapping[str, str], labels: Mapping[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


def _resources(pod: PodInfo, node: NodeInfo, requested: Mapping[str, float]) -> str | None:
    for resource, amount in pod.requests.items():
        free = node.allocatable.get(resource, 0.0) - requested.get(resource, 0.0)
        if amount > free + REQUEST_TOLERANCE:
            return f"Insufficient {resource}"
    if requested.get("pods", 0.0) + 1 > node.allocatable.get("pods", float("inf")):
        return "TooManyPods"
    return None


def _placement(pod: PodInfo, node: NodeInfo) -> str | None:
    if node.unschedulable:
        return "Unschedulable"
    if not _matches(pod.node_selector, node.labels):
        return "NodeSelectorMismatch"
    if pod.affinity_terms and not any(
        all(r.matches(node.labels) for r in term) for term in pod.affinity_terms
    ):
        return "NodeAffinityMismatch"
    for taint in node.taints:
        # PreferNoSchedule only steers the scheduler; it does not forbid.
        if taint.effect != "PreferNoSchedule" and not any(
            t.tolerates(taint) for t in pod.tolerations
        ):
            return f"UntoleratedTaint {taint.key}"
    return None


def _anti_affinity(pod: PodInfo, residents: Iterable[PodInfo]) -> str | None:
    for resident in residents:
        if any(_matches(selector, resident.labels) for selector in pod.anti_affinity) or any(
            _matches(selector, pod.labels) for selector in resident.anti_affinity
        ):
            return "PodAntiAffinity"
    return None


def why_not_fits(
    pod: PodInfo,
    node: NodeInfo,
    requested: Mapping[str, float],
    residents: Iterable[PodInfo],
) -> str | None:
    """The first predicate `node` fails for `pod`, or None when it fits.

    `requested` is what the node's pods already request (with a "pods" count);
    `residents` are the pods on it, for anti-affinity.
    """
    return (
        _placement(pod, node) or _resources(pod, node, requested) or _anti_affinity(pod, residents)
    )
