"""Which replicas go first on scale-in: pod-deletion-cost from the nodes' real usage.

Before an evaluation lowers a workload's replicas, its pods are ranked so that
removing them in that order leaves the nodes most balanced
(``rebalancing.scale_in``), and each pod's rank is written as
``controller.kubernetes.io/pod-deletion-cost``, which the ReplicaSet
controller honours. It needs the usage the rebalancer reads, not the
rebalancer: it runs whether or not pods are ever moved.

Each ranked pod also names the PredictiveScaler that ranked it, so the costs
go with that scaler when it is deleted: left behind, a ranking of usage long
gone would steer the next autoscaler's scale-ins, and a cost a user set by
hand (no such name) is never touched.
"""

from __future__ import annotations

from predictive_scaler.operator.kube import Kubernetes
from predictive_scaler.operator.resource import GROUP
from predictive_scaler.operator.settings import OperatorSettings
from predictive_scaler.operator.snapshot import IDLE, Owners, node_infos, pod_info, usage_ahead
from predictive_scaler.operator.sources import MetricSource
from predictive_scaler.rebalancing.nodes import ScoringConfig
from predictive_scaler.rebalancing.scale_in import (
    DELETION_COST_ANNOTATION,
    deletion_cost_annotations,
    deletion_costs,
)
from predictive_scaler.refs import PodRef, ScalerRef

# The PredictiveScaler (in the pod's namespace) whose ranking a pod's deletion cost is.
RANKED_BY_ANNOTATION = f"{GROUP}/deletion-cost-by"


class ScaleInRanker:
    def __init__(self, kube: Kubernetes, settings: OperatorSettings) -> None:
        self.kube = kube
        self.settings = settings
        self.scoring = ScoringConfig(
            weights=settings.rebalance_weights, threshold=settings.rebalance_threshold
        )

    def write_deletion_costs(
        self, scaler: ScalerRef, selector: str, source: MetricSource
    ) -> dict[PodRef, int]:
        """Write pod-deletion-cost on the target's pods so scale-in leaves the nodes balanced.

        ``source`` is the evaluation's, its timeout cut to what is left of the
        evaluation's budget: a slow usage read must not hold the scale-in up.
        """
        settings = self.settings
        usage = usage_ahead(source, settings.rebalance_lookahead, settings.min_rate_window)
        nodes = node_infos(self.kube.list_nodes(), usage, unmeasured_as_idle=True)
        replicas = []
        for pod in self.kube.list_pods(scaler.namespace, selector):
            if pod.metadata is None or pod.spec is None or pod.metadata.deletion_timestamp:
                continue
            used = usage.pods.get(PodRef(scaler.namespace, str(pod.metadata.name)), IDLE)
            replicas.append(pod_info(pod, Owners({}), used, frozenset()))
        costs = deletion_costs(replicas, [n.load for n in nodes], self.scoring)
        for ranked, patch in deletion_cost_annotations(costs).items():
            # A pod gone already needs no rank.
            self.kube.annotate_pod(ranked, {**patch, RANKED_BY_ANNOTATION: scaler.name})
        return costs

    def forget(self, scaler: ScalerRef) -> int:
        """Take the deletion costs ``scaler`` wrote off the pods still carrying them; how many.

        Its target may be gone or have another selector by now, so the pods are
        found by the name they carry, not by the target's selector.
        """
        forgotten = 0
        for pod in self.kube.list_pods(scaler.namespace, ""):
            meta = pod.metadata
            if meta is None or (meta.annotations or {}).get(RANKED_BY_ANNOTATION) != scaler.name:
                continue
            removal = {DELETION_COST_ANNOTATION: None, RANKED_BY_ANNOTATION: None}
            forgotten += self.kube.annotate_pod(PodRef(scaler.namespace, str(meta.name)), removal)
        return forgotten
