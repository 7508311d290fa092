"""Rebalancing strategies: what to move this cycle, from the cluster as plain values.

A strategy sees the nodes with their usage, the pods, and what is cooling
down, and returns a :class:`~predictive_scaler.rebalancing.planner.Plan`;
the operator reads the cluster before and carries the plan out after, the
same for every strategy (descheduler's balance plugins share their usage
source and evictor in the same way).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from predictive_scaler.rebalancing.cooldown import Cooling
from predictive_scaler.rebalancing.nodes import ScoringConfig
from predictive_scaler.rebalancing.planner import Limits, Plan, plan_moves
from predictive_scaler.rebalancing.pods import NodeInfo, PodInfo


class Strategy(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def threshold(self) -> float:
        """Node score below which a node is high-load (its draining taint stays)."""
        ...

    def plan(
        self, nodes: Sequence[NodeInfo], pods: Sequence[PodInfo], cooling: Cooling
    ) -> Plan: ...


@dataclass(frozen=True)
class LowestDegree:
    """The load heaps and the degree: pods off the hottest node to where the degree drops most.

    design.md section 2's node score and load-balance degree (:mod:`.planner`).
    """

    scoring: ScoringConfig
    limits: Limits
    allow_local_storage: bool = False
    name: str = "LowestDegree"

    @property
    def threshold(self) -> float:
        return self.scoring.threshold

    def plan(self, nodes: Sequence[NodeInfo], pods: Sequence[PodInfo], cooling: Cooling) -> Plan:
        return plan_moves(
            nodes,
            pods,
            self.scoring,
            self.limits,
            cooling=cooling,
            allow_local_storage=self.allow_local_storage,
        )
