"""Node scores from real usage, the load-balance degree, and the two load heaps.

For each metric m (CPU and memory, the two the operator measures) the
cluster mean is the capacity-weighted mean utilisation; node i's ratio is
mean_m / util_{i,m}; its score is the log of the weighted mean of its ratios.
A score above 0 is lighter than the cluster, below 0 heavier. The cluster's
load-balance degree is the standard deviation of the scores: 0 is perfectly
even.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

# The metrics the operator measures for every node and pod (kubelet resource
# metrics). The design also names network throughput and disk I/O; nothing the
# operator reads reports them per node and per pod, so a weight on them would
# be silently ignored, and is refused instead (ScoringConfig).
MEASURED_METRICS = ("cpu", "memory")
DEFAULT_WEIGHTS: Mapping[str, float] = dict.fromkeys(MEASURED_METRICS, 1.0)
# A node using (almost) nothing of a metric would have an infinite ratio; this
# caps what one idle metric can add to a node's score.
MAX_RATIO = 100.0


@dataclass(frozen=True)
class NodeLoad:
    """A node's capacity and usage per metric (same units per metric across nodes)."""

    name: str
    capacity: Mapping[str, float]
    usage: Mapping[str, float]

    def utilisation(self, metric: str) -> float:
        capacity = self.capacity.get(metric, 0.0)
        return self.usage.get(metric, 0.0) / capacity if capacity > 0 else 0.0

    def moved(self, delta: Mapping[str, float]) -> NodeLoad:
        """This node with `delta` added to its usage (negative to take a pod away)."""
        usage = {m: max(0.0, self.usage.get(m, 0.0) + delta.get(m, 0.0)) for m in self.capacity}
        return NodeLoad(self.name, self.capacity, usage)


@dataclass(frozen=True)
class ScoringConfig:
    weights: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    # Nodes scoring below it are high-load (sources); the others low-load (destinations).
    threshold: float = -0.1

    def __post_init__(self) -> None:
        unmeasured = sorted(set(self.weights) - set(MEASURED_METRICS))
        if unmeasured:
            raise ValueError(
                f"no usage is measured for {', '.join(unmeasured)}: weights apply to "
                f"{' and '.join(MEASURED_METRICS)} only"
            )
        if not self.weights or any(w < 0 or not math.isfinite(w) for w in self.weights.values()):
            raise ValueError(f"weights must be finite and >= 0, got {dict(self.weights)}")
        if sum(self.weights.values()) <= 0:
            raise ValueError("at least one metric needs a positive weight")


def cluster_means(nodes: Iterable[NodeLoad], metrics: Iterable[str]) -> dict[str, float]:
    """Capacity-weighted mean utilisation per metric: total usage over total capacity."""
    pool = list(nodes)
    means = {}
    for metric in metrics:
        capacity = sum(n.capacity.get(metric, 0.0) for n in pool)
        usage = sum(n.usage.get(metric, 0.0) for n in pool)
        means[metric] = usage / capacity if capacity > 0 else 0.0
    return means


def node_score(node: NodeLoad, means: Mapping[str, float], weights: Mapping[str, float]) -> float:
    """log of the weighted mean of mean_m / util_m over the metrics the cluster uses.

    A metric nobody uses (or nobody reports) says nothing about balance and
    is left out; with none left every node scores 0.
    """
    total_weight = 0.0
    weighted = 0.0
    for metric, weight in weights.items():
        mean = means.get(metric, 0.0)
        if weight <= 0 or mean <= 0:
            continue
        util = node.utilisation(metric)
        ratio = MAX_RATIO if util <= mean / MAX_RATIO else mean / util
        weighted += weight * ratio
        total_weight += weight
    return math.log(weighted / total_weight) if total_weight > 0 else 0.0


def scores(nodes: Iterable[NodeLoad], config: ScoringConfig) -> dict[str, float]:
    pool = list(nodes)
    means = cluster_means(pool, config.weights)
    return {n.name: node_score(n, means, config.weights) for n in pool}


def balance_degree(node_scores: Mapping[str, float]) -> float:
    """Standard deviation of the node scores (population): 0 when perfectly even."""
    values = list(node_scores.values())
    if len(values) < 2:
        return 0.0
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))


@dataclass
class DegreeTracker:
    """Standard deviation of scores, updated in O(1) when one score changes."""

    count: int
    total: float
    squares: float

    @classmethod
    def of(cls, values: Sequence[float]) -> DegreeTracker:
        return cls(len(values), sum(values), sum(v * v for v in values))

    def value(self) -> float:
        if self.count < 2:
            return 0.0
        mean = self.total / self.count
        return math.sqrt(max(0.0, self.squares / self.count - mean * mean))

    def replaced(self, old: float, new: float) -> DegreeTracker:
        return DegreeTracker(
            self.count, self.total - old + new, self.squares - old * old + new * new
        )


@dataclass
class LoadHeaps:
    """High-load nodes hottest first (a max-heap on load), low-load nodes coolest first.

    heapq is a min-heap: the high heap holds (score, name), lowest score =
    heaviest on top; the low heap holds (-score, name), highest score =
    lightest on top. A node re-scored after a move is placed again with
    :meth:`rescore`; its earlier entry in the high heap is left to go stale
    (whoever pops it compares it with the node's current score), its earlier
    entry in the low heap is removed.
    """

    high: list[tuple[float, str]]
    low: list[tuple[float, str]]
    threshold: float

    @classmethod
    def split(cls, node_scores: Mapping[str, float], threshold: float) -> LoadHeaps:
        high = [(s, name) for name, s in node_scores.items() if s < threshold]
        low = [(-s, name) for name, s in node_scores.items() if s >= threshold]
        heapq.heapify(high)
        heapq.heapify(low)
        return cls(high, low, threshold)

    def hottest(self) -> tuple[str, float] | None:
        return (self.high[0][1], self.high[0][0]) if self.high else None

    def pop_hottest(self) -> tuple[str, float] | None:
        """Take the hottest entry off the high heap (it may be stale: see the class)."""
        if not self.high:
            return None
        score, name = heapq.heappop(self.high)
        return name, score

    def rescore(self, name: str, score: float) -> None:
        """Place a node whose score changed in the heap its new score belongs to."""
        if any(entry[1] == name for entry in self.low):
            self.low = [entry for entry in self.low if entry[1] != name]
            heapq.heapify(self.low)
        if score < self.threshold:
            heapq.heappush(self.high, (score, name))
        else:
            heapq.heappush(self.low, (-score, name))

    def coolest(self) -> list[tuple[str, float]]:
        """Low-load nodes, coolest first (a sorted copy; the heap is left as it is)."""
        return [(name, -negated) for negated, name in sorted(self.low)]
