"""Acting on a rebalancing plan: evictions, the draining taint, cool-down stamps and Events.

Everything the rebalancer changes in the cluster goes through here, and every
request through the shared Kubernetes adapter. Each move taints its source
node (PreferNoSchedule, so the scheduler places the replacement elsewhere),
stamps both nodes and the workload's PredictiveScaler, then asks the Eviction
API: a 429 from a PodDisruptionBudget is a normal answer, the stamps are put
back and the move is tried in a later cycle. The stamps are written before
the eviction so the settle and cool-down waits (``rebalancing.cooldown``)
survive a restart at any point. A node's taint is lifted once it leaves the
high-load heap.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from predictive_scaler.operator import failpoints, metrics
from predictive_scaler.operator.kube import TaintChange
from predictive_scaler.operator.resource import GROUP
from predictive_scaler.rebalancing.cooldown import Streak
from predictive_scaler.rebalancing.planner import Move, Plan
from predictive_scaler.refs import NodeRef, PodRef, ScalerRef, WorkloadRef

log = logging.getLogger(__name__)

DRAINING_TAINT = f"{GROUP}/draining"
REBALANCED_AT = f"{GROUP}/rebalanced-at"
COMPONENT = "predictive-scaler-rebalancer"
# Events remembered for aggregation (an LRU): pods seen skipped, moved, refused.
REMEMBERED_EVENTS = 2_000
# Reasons a pod is never a candidate: no Event for those, they would flood.
NOT_CANDIDATES = frozenset({"NotOptedIn", "DaemonSetPod", "MirrorPod", "BarePod", "SystemCritical"})


@dataclass(frozen=True)
class OptedIn:
    """The PredictiveScaler that opted a workload in, and its annotations (the streak stamp)."""

    scaler: ScalerRef
    annotations: Mapping[str, str]


@dataclass(frozen=True)
class CycleReport:
    plan: Plan | None
    evicted: tuple[PodRef, ...] = ()
    blocked: tuple[PodRef, ...] = ()


# What carries a cool-down stamp: a Node, or the PredictiveScaler of a moved workload.
Stamped = NodeRef | ScalerRef


class ClusterWrites(Protocol):
    """What the evictor asks of the API (the shared Kubernetes adapter implements it)."""

    def evict(self, pod: PodRef) -> None: ...

    def annotate(self, target: NodeRef | ScalerRef, key: str, value: str | None) -> None: ...

    def update_taints(self, node: str, change: TaintChange) -> bool: ...

    def post_event(
        self, pod: PodRef, kind: str, reason: str, message: str, component: str
    ) -> str: ...

    def repeat_event(self, namespace: str, name: str, count: int, message: str) -> bool: ...


def describe(move: Move) -> str:
    after = f"degree {move.degree_after:.3f} after"
    return f"{move.pod} from {move.source} to {move.destination} ({after})"


class Evictor:
    """Carries out plans, or (DryRun) says what it would do."""

    def __init__(self, kube: ClusterWrites, cooldown: float) -> None:
        self.kube = kube
        self.cooldown = cooldown
        # Events posted, by pod and reason: a repeat counts up the first one (its
        # message the newest: a move's degree differs each cycle), as client-go's
        # recorder aggregates similar Events, instead of posting a copy each cycle.
        self._posted: OrderedDict[tuple[PodRef, str], tuple[str, int]] = OrderedDict()

    def execute(
        self,
        plan: Plan,
        opted: Mapping[WorkloadRef, OptedIn],
        now: float,
        nodes: Sequence[client.V1Node],
    ) -> CycleReport:
        evicted: list[PodRef] = []
        blocked: list[PodRef] = []
        # The stamps as this cycle read them, kept current as it writes, so an
        # undo restores what the previous move of the cycle wrote, not older.
        stamps: dict[Stamped, str | None] = {
            NodeRef(str(node.metadata.name)): (node.metadata.annotations or {}).get(REBALANCED_AT)
            for node in nodes
            if node.metadata is not None
        }
        for owner in opted.values():
            stamps[owner.scaler] = owner.annotations.get(REBALANCED_AT)
        tainted, moved_from = set(), set()
        for move in plan.moves:
            try:
                if self._taint(move.source):
                    tainted.add(move.source)
                # The stamps are written before the eviction, not after: a crash in
                # between then costs one settle without a move, never a second
                # move of the same workload or node after a restart.
                undo = self._stamp(move, opted, now, stamps)
            except ApiException as error:
                # A node or scaler gone since the plan: this move fails, not the cycle
                # (whose other moves, untainting and Events would be skipped).
                self._not_moved(move, error, blocked)
                continue
            failpoints.reach("evict:before")
            try:
                self.kube.evict(move.pod)
            except ApiException as error:
                self._unstamp(undo, stamps)
                self._not_moved(move, error, blocked)
                continue
            failpoints.reach("evict:after")
            metrics.EVICTIONS.labels("Evicted").inc()
            evicted.append(move.pod)
            moved_from.add(move.source)
            self.event(move.pod, "Evicted", f"rebalanced: {describe(move)}")
        # A node tainted this cycle whose every move a PDB refused has no
        # replacement to steer away: the taint would only keep pods off it.
        for node in tainted - moved_from:
            self._untaint(node)
        return CycleReport(plan, tuple(evicted), tuple(blocked))

    def _not_moved(self, move: Move, error: ApiException, blocked: list[PodRef]) -> None:
        reason = "Blocked" if error.status == 429 else "Failed"
        metrics.EVICTIONS.labels(reason).inc()
        blocked.append(move.pod)
        self.event(
            move.pod,
            f"Eviction{reason}",
            f"not moved ({error.status} {error.reason}): {describe(move)}",
        )

    def dry_run(self, plan: Plan) -> CycleReport:
        for move in plan.moves:
            self.event(move.pod, "WouldEvict", f"DryRun: would move {describe(move)}")
        return CycleReport(plan)

    def report_skipped(self, plan: Plan) -> None:
        for skipped in plan.skipped:
            if skipped.reason not in NOT_CANDIDATES:
                self.event(
                    skipped.pod, "RebalanceSkipped", f"stays on {skipped.node}: {skipped.reason}"
                )

    def lift_taints(self, nodes: Sequence[client.V1Node], still_hot: set[str]) -> None:
        """Lift the draining taint from every node that is no longer in the high-load heap."""
        for node in nodes:
            taints = list((node.spec.taints if node.spec else None) or [])
            name = str(node.metadata.name) if node.metadata else ""
            if name in still_hot or not any(t.key == DRAINING_TAINT for t in taints):
                continue
            self._untaint(name)

    def event(self, pod: PodRef, reason: str, message: str) -> None:
        kind = "Warning" if reason == "EvictionFailed" else "Normal"
        said = (pod, reason)
        try:
            earlier = self._posted.get(said)
            if earlier is not None:
                name, count = earlier
                if self.kube.repeat_event(pod.namespace, name, count + 1, message):
                    self._posted[said] = (name, count + 1)
                    self._posted.move_to_end(said)
                    return
            self._posted[said] = (self.kube.post_event(pod, kind, reason, message, COMPONENT), 1)
        except ApiException as error:
            log.warning("could not post event %s on %s: %s", reason, pod, error.reason)
            return
        while len(self._posted) > REMEMBERED_EVENTS:
            self._posted.popitem(last=False)

    def _stamp(
        self,
        move: Move,
        opted: Mapping[WorkloadRef, OptedIn],
        now: float,
        stamps: dict[Stamped, str | None],
    ) -> list[tuple[Stamped, str | None]]:
        """Stamp both nodes and extend the workload's streak on its scaler; return the undo."""
        moved_at = f"{now:.0f}"
        writes: list[tuple[Stamped, str]] = [
            (NodeRef(move.source), moved_at),
            (NodeRef(move.destination), moved_at),
        ]
        owner = opted.get(move.workload)
        if owner is not None:
            earlier = Streak.decode(stamps.get(owner.scaler))
            streak = Streak(now, now) if earlier is None else earlier.extended(now, self.cooldown)
            writes.append((owner.scaler, streak.encode()))
        undo: list[tuple[Stamped, str | None]] = []
        try:
            for target, stamp in writes:
                before = stamps.get(target)
                self.kube.annotate(target, REBALANCED_AT, stamp)
                undo.append((target, before))
                stamps[target] = stamp
        except ApiException:
            self._unstamp(undo, stamps)  # what was written of this move goes back
            raise
        return undo

    def _unstamp(
        self, undo: list[tuple[Stamped, str | None]], stamps: dict[Stamped, str | None]
    ) -> None:
        """Nothing moved: put the earlier stamps back, so a PDB's 429 costs no settle."""
        for target, earlier in undo:
            try:
                self.kube.annotate(target, REBALANCED_AT, earlier)
            except ApiException as error:
                log.warning("could not restore the cool-down of %s: %s", target, error.reason)
            else:
                stamps[target] = earlier

    def _taint(self, node_name: str) -> bool:
        """Taint the node as draining; False when it already was."""
        return self.kube.update_taints(node_name, with_draining_taint)

    def _untaint(self, node_name: str) -> None:
        self.kube.update_taints(node_name, without_draining_taint)


def with_draining_taint(taints: list[client.V1Taint]) -> list[client.V1Taint] | None:
    if any(t.key == DRAINING_TAINT for t in taints):
        return None
    draining = client.V1Taint(key=DRAINING_TAINT, effect="PreferNoSchedule", value="true")
    return [*taints, draining]


def without_draining_taint(taints: list[client.V1Taint]) -> list[client.V1Taint] | None:
    kept = [t for t in taints if t.key != DRAINING_TAINT]
    return None if len(kept) == len(taints) else kept
