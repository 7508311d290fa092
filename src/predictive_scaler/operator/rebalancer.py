"""The rebalancing loop: one per operator, evicting opted-in pods off the hottest nodes.

Each cycle reads the nodes, the pods and their real usage, plans with the pure
planner, and (in Auto mode) evicts through the Eviction API: a 429 from a
PodDisruptionBudget is a normal answer, tried again in a later cycle. The
scheduler places each replacement; a temporary PreferNoSchedule taint on the
node being drained steers it elsewhere, and is lifted once the node leaves the
high-load heap. What is about to move is written on the nodes (a time) and the
PredictiveScaler objects (the workload's streak of moves) as an annotation
before the eviction, so the settle and cool-down waits (`rebalancing.cooldown`)
survive a restart at any point of a cycle.
"""

from __future__ import annotations

import datetime
import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from predictive_scaler.operator import failpoints, metrics
from predictive_scaler.operator.metric_sources import metric_source
from predictive_scaler.operator.resource import GROUP, PLURAL, VERSION
from predictive_scaler.operator.settings import OperatorSettings
from predictive_scaler.operator.snapshot import Owners, node_info, pod_info
from predictive_scaler.operator.sources import CPU, MEMORY, MetricSource, Usage
from predictive_scaler.rebalancing.cooldown import Cooling, PodBirth, Streak, Timings, cooling
from predictive_scaler.rebalancing.nodes import ScoringConfig
from predictive_scaler.rebalancing.planner import Limits, Move, Plan, plan_moves
from predictive_scaler.rebalancing.pods import NodeInfo
from predictive_scaler.rebalancing.projection import projected_usage
from predictive_scaler.rebalancing.scale_in import deletion_cost_annotations, deletion_costs
from predictive_scaler.refs import NodeRef, PodRef, ScalerRef, WorkloadRef

log = logging.getLogger(__name__)

DRAINING_TAINT = f"{GROUP}/draining"
REBALANCED_AT = f"{GROUP}/rebalanced-at"
# Reasons a pod is never a candidate: no Event for those, they would flood.
# Samples of each pod's recent CPU that the linear fit to its limit uses.
HISTORY_POINTS = 10
_NOT_CANDIDATES = {"NotOptedIn", "DaemonSetPod", "MirrorPod", "BarePod", "SystemCritical"}


@dataclass(frozen=True)
class CycleReport:
    plan: Plan | None
    evicted: tuple[PodRef, ...] = ()
    blocked: tuple[PodRef, ...] = ()


@dataclass(frozen=True)
class OptedIn:
    """The PredictiveScaler that opted a workload in, and its annotations (the streak stamp)."""

    scaler: ScalerRef
    annotations: Mapping[str, str]


# What carries a cool-down stamp: a Node, or the PredictiveScaler of a moved workload.
Stamped = NodeRef | ScalerRef


def _annotation(stamp: str | None) -> dict[str, Any]:
    """A merge patch setting (or, with None, removing) the cool-down stamp."""
    return {"metadata": {"annotations": {REBALANCED_AT: stamp}}}


def _epoch(text: str | None) -> float | None:
    try:
        return float(text) if text else None
    except ValueError:
        return None


class Rebalancer:
    def __init__(
        self, api: client.ApiClient, settings: OperatorSettings, source: MetricSource | None = None
    ) -> None:
        self.source = source or metric_source(settings, api)
        self.core = client.CoreV1Api(api)
        self.apps = client.AppsV1Api(api)
        self.custom = client.CustomObjectsApi(api)
        self.settings = settings
        self.scoring = ScoringConfig(
            weights=settings.rebalance_weights, threshold=settings.rebalance_threshold
        )
        self.limits = Limits(
            per_node=settings.rebalance_per_node,
            per_workload=settings.rebalance_per_workload,
            per_cycle=settings.rebalance_budget,
        )

    # ---- reading -------------------------------------------------------------

    def _opted_in(self) -> dict[WorkloadRef, OptedIn]:
        """The workloads whose PredictiveScaler enables rebalancing, and that scaler."""
        found: Any = self.custom.list_cluster_custom_object(
            GROUP, VERSION, PLURAL, label_selector=self.settings.shard_selector
        )
        opted = {}
        for item in found.get("items", []):
            spec, meta = item.get("spec", {}), item.get("metadata", {})
            namespace = meta.get("namespace", "")
            if self.settings.namespaces and namespace not in self.settings.namespaces:
                continue
            if spec.get("rebalance", {}).get("enabled"):
                ref = spec.get("scaleTargetRef", {})
                workload = WorkloadRef(namespace, str(ref.get("kind")), str(ref.get("name")))
                opted[workload] = OptedIn(
                    ScalerRef(namespace, meta.get("name", "")), meta.get("annotations") or {}
                )
        return opted

    def _usage(self) -> Usage:
        """Usage now, a node's CPU counted at its forecast peak over the look-ahead."""
        usage = self.source.usage()
        lookahead = self.settings.rebalance_lookahead
        if lookahead <= 0:
            return usage
        step = max(self.settings.min_rate_window, lookahead / 5)
        horizon = max(1, math.ceil(lookahead / step))
        nodes = {name: dict(measured) for name, measured in usage.nodes.items()}
        for name, values in self.source.node_cpu_history(step, 21).items():
            peak = projected_usage(list(values), horizon)
            if name in nodes and math.isfinite(peak):
                nodes[name][CPU] = max(nodes[name].get(CPU, 0.0), peak)
        return Usage(nodes, usage.pods)

    def _nodes(
        self, usage: Usage, selector: str | None
    ) -> tuple[list[client.V1Node], list[NodeInfo]]:
        listed = self.core.list_node(label_selector=selector).items
        nodes = [
            node_info(n, usage.nodes.get(str(n.metadata.name), {CPU: 0.0, MEMORY: 0.0}))
            for n in listed
            if n.metadata is not None
        ]
        return listed, nodes

    def mark_scale_in(self, namespace: str, selector: str) -> dict[PodRef, int]:
        """Write pod-deletion-cost on the target's pods so scale-in leaves the nodes balanced."""
        usage = self._usage()
        _, nodes = self._nodes(usage, None)
        replicas = []
        for pod in self.core.list_namespaced_pod(namespace, label_selector=selector).items:
            if pod.metadata is None or pod.spec is None or pod.metadata.deletion_timestamp:
                continue
            ref = PodRef(namespace, str(pod.metadata.name))
            used = usage.pods.get(ref, {CPU: 0.0, MEMORY: 0.0})
            replicas.append(pod_info(pod, Owners({}), used, frozenset()))
        costs = deletion_costs(replicas, [n.load for n in nodes], self.scoring)
        for ranked, patch in deletion_cost_annotations(costs).items():
            try:
                self.core.patch_namespaced_pod(
                    ranked.name, ranked.namespace, {"metadata": {"annotations": patch}}
                )
            except ApiException as error:
                if error.status != 404:  # gone already: nothing to rank
                    raise
        return costs

    # ---- one cycle -----------------------------------------------------------

    def cycle(self, now: float) -> CycleReport:
        opted = self._opted_in()
        usage = self._usage()
        listed, nodes = self._nodes(usage, self.settings.rebalance_nodes or None)
        names = {n.name for n in nodes}
        owners = Owners.from_replica_sets(self.apps.list_replica_set_for_all_namespaces().items)
        # Each pod's recent CPU, for the planner's "nearest its limit first" order.
        history_step = self.settings.min_rate_window
        histories = self.source.pod_cpu_history(history_step, HISTORY_POINTS)
        opted_in = frozenset(opted)
        pods, births = [], []
        for pod in self.core.list_pod_for_all_namespaces(
            field_selector="status.phase=Running"
        ).items:
            if pod.spec is None or pod.metadata is None or pod.spec.node_name not in names:
                continue
            ref = PodRef(str(pod.metadata.namespace), str(pod.metadata.name))
            used = usage.pods.get(ref, {CPU: 0.0, MEMORY: 0.0})
            info = pod_info(pod, owners, used, opted_in)
            history = tuple(histories.get(ref, ()))
            pods.append(replace(info, cpu_history=history, history_step=history_step))
            if info.opted_in and info.workload and pod.metadata.creation_timestamp is not None:
                created = pod.metadata.creation_timestamp.timestamp()
                births.append(PodBirth(info.ref, info.workload, created))
        held = self._cooling(listed, opted, births, now)
        plan = plan_moves(nodes, pods, self.scoring, self.limits, cooling=held)
        metrics.publish_balance(plan, self.scoring.threshold)
        reasons = sorted({s.reason for s in plan.skipped})
        log.info(
            "rebalance: %d nodes, %d pods (%d opted-in workloads), degree %.3f -> %.3f, "
            "%d moves planned, skipped for %s",
            len(nodes),
            len(pods),
            len(opted),
            plan.degree_before,
            plan.degree_after,
            len(plan.moves),
            ", ".join(reasons) or "nothing",
        )
        report = CycleReport(plan)
        if self.settings.rebalance_mode == "Auto":
            report = self._execute(plan, opted, now, listed)
        else:
            for move in plan.moves:
                self._event(move.pod, "WouldEvict", f"DryRun: would move {self._words(move)}")
        for skipped in plan.skipped:
            if skipped.reason not in _NOT_CANDIDATES:
                self._event(
                    skipped.pod, "RebalanceSkipped", f"stays on {skipped.node}: {skipped.reason}"
                )
        self._lift_taints(listed, plan)
        return report

    def _cooling(
        self,
        nodes: list[client.V1Node],
        opted: Mapping[WorkloadRef, OptedIn],
        births: list[PodBirth],
        now: float,
    ) -> Cooling:
        node_moves = {}
        for node in nodes:
            if node.metadata is None:
                continue
            moved = _epoch((node.metadata.annotations or {}).get(REBALANCED_AT))
            if moved is not None:
                node_moves[str(node.metadata.name)] = moved
        streaks = {}
        for workload, owner in opted.items():
            streak = Streak.decode(owner.annotations.get(REBALANCED_AT))
            if streak is not None:
                streaks[workload] = streak
        timings = Timings(self.settings.rebalance_settle_seconds, self.settings.rebalance_cooldown)
        return cooling(node_moves, streaks, births, now, timings)

    # ---- acting --------------------------------------------------------------

    @staticmethod
    def _words(move: Move) -> str:
        after = f"degree {move.degree_after:.3f} after"
        return f"{move.pod} from {move.source} to {move.destination} ({after})"

    def _execute(
        self,
        plan: Plan,
        opted: Mapping[WorkloadRef, OptedIn],
        now: float,
        nodes: list[client.V1Node],
    ) -> CycleReport:
        evicted, blocked = [], []
        # The stamps as this cycle read them, kept current as it writes, so an
        # undo restores what the previous move of the cycle wrote, not older.
        stamps: dict[Stamped, str | None] = {
            NodeRef(str(node.metadata.name)): (node.metadata.annotations or {}).get(REBALANCED_AT)
            for node in nodes
            if node.metadata is not None
        }
        for owner in opted.values():
            stamps[owner.scaler] = owner.annotations.get(REBALANCED_AT)
        for move in plan.moves:
            self._taint(move.source)
            # The stamps are written before the eviction, not after: a crash in
            # between then costs one settle without a move, never a second
            # move of the same workload or node after a restart.
            undo = self._stamp(move, opted, now, stamps)
            failpoints.reach("evict:before")
            try:
                self.core.create_namespaced_pod_eviction(
                    move.pod.name,
                    move.pod.namespace,
                    {"metadata": {"name": move.pod.name, "namespace": move.pod.namespace}},  # type: ignore[arg-type]
                )
            except ApiException as error:
                self._unstamp(undo, stamps)
                reason = "Blocked" if error.status == 429 else "Failed"
                metrics.EVICTIONS.labels(reason).inc()
                blocked.append(move.pod)
                self._event(
                    move.pod,
                    f"Eviction{reason}",
                    f"not moved ({error.status} {error.reason}): {self._words(move)}",
                )
                continue
            failpoints.reach("evict:after")
            metrics.EVICTIONS.labels("Evicted").inc()
            evicted.append(move.pod)
            self._event(move.pod, "Evicted", f"rebalanced: {self._words(move)}")
        return CycleReport(plan, tuple(evicted), tuple(blocked))

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
            streak = (
                Streak(now, now)
                if earlier is None
                else earlier.extended(now, self.settings.rebalance_cooldown)
            )
            writes.append((owner.scaler, streak.encode()))
        undo = [(target, stamps.get(target)) for target, _ in writes]
        for target, stamp in writes:
            self._write_stamp(target, stamp)
            stamps[target] = stamp
        return undo

    def _unstamp(
        self, undo: list[tuple[Stamped, str | None]], stamps: dict[Stamped, str | None]
    ) -> None:
        """Nothing moved: put the earlier stamps back, so a PDB's 429 costs no settle."""
        for target, earlier in undo:
            try:
                self._write_stamp(target, earlier)
            except ApiException as error:
                log.warning("could not restore the cool-down of %s: %s", target, error.reason)
            else:
                stamps[target] = earlier

    def _write_stamp(self, target: Stamped, stamp: str | None) -> None:
        if isinstance(target, NodeRef):
            self.core.patch_node(target.name, _annotation(stamp))
        else:
            self.custom.patch_namespaced_custom_object(
                GROUP, VERSION, target.namespace, PLURAL, target.name, _annotation(stamp)
            )

    def _taint(self, node_name: str) -> None:
        node = self.core.read_node(node_name)
        taints = list((node.spec.taints if node.spec else None) or [])
        if any(t.key == DRAINING_TAINT for t in taints):
            return
        taints.append(client.V1Taint(key=DRAINING_TAINT, effect="PreferNoSchedule", value="true"))
        self.core.patch_node(node_name, {"spec": {"taints": [t.to_dict() for t in taints]}})

    def _lift_taints(self, nodes: list[client.V1Node], plan: Plan) -> None:
        for node in nodes:
            taints = list((node.spec.taints if node.spec else None) or [])
            name = str(node.metadata.name) if node.metadata else ""
            hot = plan.scores_after.get(name, 0.0) < self.scoring.threshold
            if hot or not any(t.key == DRAINING_TAINT for t in taints):
                continue
            kept = [t.to_dict() for t in taints if t.key != DRAINING_TAINT]
            self.core.patch_node(name, {"spec": {"taints": kept}})

    def _event(self, pod: PodRef, reason: str, message: str) -> None:
        namespace, name = pod.namespace, pod.name
        now = datetime.datetime.now(datetime.UTC)
        body = {
            "metadata": {"generateName": f"{name}.", "namespace": namespace},
            "involvedObject": {
                "kind": "Pod",
                "namespace": namespace,
                "name": name,
                "apiVersion": "v1",
            },
            "reason": reason,
            "message": message,
            "type": "Warning" if reason in ("EvictionFailed",) else "Normal",
            "source": {"component": "predictive-scaler-rebalancer"},
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
        }
        try:
            self.core.create_namespaced_event(namespace, body)  # type: ignore[arg-type]
        except ApiException as error:
            log.warning("could not post event %s on %s: %s", reason, pod, error.reason)
