"""The rebalancing loop: one per operator, moving opted-in pods off the hottest nodes.

Each cycle has three parts, along descheduler's seams: the cluster read as
plain values (nodes and pods through the Kubernetes adapter, their usage
through the metric source), a plan from the strategy (pure), and the plan
carried out (or, in DryRun, described) by the :class:`Evictor`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace

from kubernetes import client

from predictive_scaler.operator import metrics
from predictive_scaler.operator.conditions import may_act
from predictive_scaler.operator.evictor import (
    DRAINING_TAINT,
    REBALANCED_AT,
    CycleReport,
    Evictor,
    OptedIn,
)
from predictive_scaler.operator.kube import Kubernetes
from predictive_scaler.operator.metric_sources import metric_source
from predictive_scaler.operator.settings import OperatorSettings
from predictive_scaler.operator.snapshot import IDLE, Owners, node_infos, pod_info, usage_ahead
from predictive_scaler.operator.sources import MetricSource
from predictive_scaler.rebalancing.cooldown import Cooling, PodBirth, Streak, Timings, cooling
from predictive_scaler.rebalancing.nodes import ScoringConfig
from predictive_scaler.rebalancing.planner import Limits
from predictive_scaler.rebalancing.strategies import LowestDegree, Strategy
from predictive_scaler.refs import PodRef, ScalerRef, WorkloadRef

log = logging.getLogger(__name__)

__all__ = ["DRAINING_TAINT", "REBALANCED_AT", "CycleReport", "Rebalancer", "default_strategy"]

# Samples of each pod's recent CPU that the linear fit to its limit uses.
HISTORY_POINTS = 10


def default_strategy(settings: OperatorSettings) -> Strategy:
    return LowestDegree(
        ScoringConfig(weights=settings.rebalance_weights, threshold=settings.rebalance_threshold),
        Limits(
            per_node=settings.rebalance_per_node,
            per_workload=settings.rebalance_per_workload,
            per_cycle=settings.rebalance_budget,
        ),
    )


def _epoch(text: str | None) -> float | None:
    try:
        return float(text) if text else None
    except ValueError:
        return None


class Rebalancer:
    def __init__(
        self,
        kube: Kubernetes,
        settings: OperatorSettings,
        source: MetricSource,
        strategy: Strategy | None = None,
    ) -> None:
        self.kube = kube
        self.source = source
        self.settings = settings
        self.strategy = strategy or default_strategy(settings)
        self.evictor = Evictor(kube, settings.rebalance_cooldown)
        # When each pod's eviction was last refused (a PDB's 429, or another failure):
        # kept out of the plans for a settle, so a pod a PDB always protects does not take
        # a move every cycle from the pods beside it. In memory only: a restart costs one
        # refusal more.
        self._refused: dict[PodRef, float] = {}

    @classmethod
    def from_settings(cls, api: client.ApiClient, settings: OperatorSettings) -> Rebalancer:
        """A rebalancer with its own adapter and the metric source ``settings`` choose."""
        return cls(Kubernetes(api), settings, metric_source(settings, api))

    def _opted_in(self) -> dict[WorkloadRef, OptedIn]:
        """The workloads whose PredictiveScaler enables rebalancing, and that scaler."""
        opted = {}
        for item in self.kube.list_scalers(self.settings.shard_selector):
            spec, meta = item.get("spec", {}), item.get("metadata", {})
            namespace = meta.get("namespace", "")
            if self.settings.namespaces and namespace not in self.settings.namespaces:
                continue
            # A refused object (a foreign query, a lost conflict), or one not yet
            # evaluated and so not yet known not to be, owns nothing to move.
            acting = may_act((item.get("status") or {}).get("conditions") or [])
            if spec.get("rebalance", {}).get("enabled") and acting:
                ref = spec.get("scaleTargetRef", {})
                workload = WorkloadRef(namespace, str(ref.get("kind")), str(ref.get("name")))
                opted[workload] = OptedIn(
                    ScalerRef(namespace, meta.get("name", "")), meta.get("annotations") or {}
                )
        return opted

    # ---- one cycle -----------------------------------------------------------

    def cycle(self, now: float) -> CycleReport:
        settings = self.settings
        opted = self._opted_in()
        usage = usage_ahead(self.source, settings.rebalance_lookahead, settings.min_rate_window)
        listed = self.kube.list_nodes(settings.rebalance_nodes or None)
        nodes = node_infos(listed, usage)
        names = {n.name for n in nodes}
        owners = Owners.from_replica_sets(self.kube.list_replica_sets())
        # Each pod's recent CPU, for the planner's "nearest its limit first" order.
        history_step = settings.min_rate_window
        histories = self.source.pod_cpu_history(history_step, HISTORY_POINTS)
        opted_in = frozenset(opted)
        pods, births = [], []
        for pod in self.kube.list_running_pods():
            if pod.spec is None or pod.metadata is None or pod.spec.node_name not in names:
                continue
            ref = PodRef(str(pod.metadata.namespace), str(pod.metadata.name))
            info = pod_info(pod, owners, usage.pods.get(ref, IDLE), opted_in)
            history = tuple(histories.get(ref, ()))
            pods.append(replace(info, cpu_history=history, history_step=history_step))
            if info.opted_in and info.workload and pod.metadata.creation_timestamp is not None:
                created = pod.metadata.creation_timestamp.timestamp()
                births.append(PodBirth(info.ref, info.workload, created))
        settle = settings.rebalance_settle_seconds
        self._refused = {pod: at for pod, at in self._refused.items() if now - at < settle}
        cool = self._cooling(listed, opted, births, now)
        cool = replace(cool, refused=frozenset(self._refused))
        plan = self.strategy.plan(nodes, pods, cool)
        metrics.publish_balance(plan, self.strategy.threshold)
        reasons = sorted({s.reason for s in plan.skipped})
        log.info(
            "rebalance (%s): %d nodes, %d pods (%d opted-in workloads), degree %.3f -> %.3f, "
            "%d moves planned, skipped for %s",
            self.strategy.name,
            len(nodes),
            len(pods),
            len(opted),
            plan.degree_before,
            plan.degree_after,
            len(plan.moves),
            ", ".join(reasons) or "nothing",
        )
        if settings.rebalance_mode == "Auto":
            report = self.evictor.execute(plan, opted, now, listed)
            self._refused |= dict.fromkeys(report.blocked, now)
        else:
            report = self.evictor.dry_run(plan)
        self.evictor.report_skipped(plan)
        hot = {name for name, score in plan.scores_after.items() if score < self.strategy.threshold}
        self.evictor.lift_taints(listed, hot)
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
