"""What may not move this cycle: two waits with two different reasons.

* **Settle.** After a move, the source's and destination's measured usage
  (a rate over a window) shows the move only once the window has passed over
  the replacement. Until then a node still reads as hot or cool as it was, and
  the workload's pods as they were, so both nodes of a move and its workload
  wait this long before they take part in another move.
* **Cool-down.** The guard against ping-pong: a pod that a move created (a
  replacement) is not moved again for this long. A workload's moves form a
  streak while each comes within a cool-down of the last; every pod the
  workload created since its streak began is a replacement, or a scale-up that
  is just as young, and waits. "Since" allows a settle before the streak's
  start: creation times come from the API server's clock and the streak from
  the operator's, and a pod that young had not shown its usage either.

Draining a node that is still hot after it has settled is wanted; moving the
pod that was just moved is not. One wait for both (the cool-down on nodes and
workloads) stopped a hot node from draining for ten minutes after its first
move, which is why they are apart.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from predictive_scaler.refs import PodRef, WorkloadRef


@dataclass(frozen=True)
class Timings:
    settle: float
    cooldown: float


@dataclass(frozen=True)
class Streak:
    """A workload's run of moves: when it began and when it last moved."""

    since: float
    last: float

    def extended(self, now: float, cooldown: float) -> Streak:
        if now - self.last < cooldown:
            return Streak(self.since, now)
        return Streak(now, now)

    def encode(self) -> str:
        return f"{self.since:.0f}/{self.last:.0f}"

    @classmethod
    def decode(cls, text: str | None) -> Streak | None:
        """The stamp as written by `encode`, or a bare time (one move); None if unreadable."""
        if not text:
            return None
        since, _, last = text.partition("/")
        try:
            first = float(since)
            latest = float(last) if last else first
        except ValueError:
            return None
        return cls(min(first, latest), latest)


@dataclass(frozen=True)
class PodBirth:
    pod: PodRef
    workload: WorkloadRef
    created: float


@dataclass(frozen=True)
class Cooling:
    """What may not take part in a move this cycle: nodes (by name), workloads and pods."""

    nodes: frozenset[str] = field(default_factory=frozenset)
    workloads: frozenset[WorkloadRef] = field(default_factory=frozenset)
    pods: frozenset[PodRef] = field(default_factory=frozenset)
    # Pods whose eviction the API refused lately (a PDB's 429, or another failure): tried
    # again after a settle.
    refused: frozenset[PodRef] = field(default_factory=frozenset)


def cooling(
    node_moves: Mapping[str, float],
    workload_streaks: Mapping[WorkloadRef, Streak],
    pods: Iterable[PodBirth],
    now: float,
    timings: Timings,
) -> Cooling:
    """Nodes and workloads within a settle of their last move, and the pods moves created."""
    young = {
        workload: streak.since - timings.settle
        for workload, streak in workload_streaks.items()
        if now - streak.last < timings.cooldown
    }
    return Cooling(
        frozenset(name for name, moved in node_moves.items() if now - moved < timings.settle),
        frozenset(
            workload
            for workload, streak in workload_streaks.items()
            if now - streak.last < timings.settle
        ),
        frozenset(
            pod.pod for pod in pods if pod.workload in young and pod.created >= young[pod.workload]
        ),
    )
