from __future__ import annotations

from predictive_scaler.rebalancing.nodes import NodeLoad, ScoringConfig
from predictive_scaler.rebalancing.pods import PodInfo
from predictive_scaler.rebalancing.scale_in import (
    DELETION_COST_ANNOTATION,
    deletion_cost_annotations,
    deletion_costs,
    stranded,
)
from predictive_scaler.refs import PodRef, WorkloadRef

CONFIG = ScoringConfig(weights={"cpu": 1.0, "memory": 1.0})


def replica(name: str, node: str, cpu: float = 1.0, memory: float = 1.0) -> PodInfo:
    return PodInfo(
        name=name,
        namespace="ns",
        node=node,
        workload=WorkloadRef("ns", "Deployment", "web"),
        usage={"cpu": cpu, "memory": memory},
    )


def load(name: str, cpu: float, memory: float) -> NodeLoad:
    return NodeLoad(name, {"cpu": 10.0, "memory": 10.0}, {"cpu": cpu, "memory": memory})


def test_replicas_on_the_heaviest_node_go_first() -> None:
    nodes = [load("heavy", 9, 9), load("middle", 5, 5), load("light", 2, 2)]
    replicas = [
        replica("on-light", "light"),
        replica("on-heavy", "heavy"),
        replica("on-middle", "middle"),
    ]
    costs = deletion_costs(replicas, nodes, CONFIG)
    assert sorted(costs, key=costs.__getitem__) == [
        PodRef("ns", "on-heavy"),
        PodRef("ns", "on-middle"),
        PodRef("ns", "on-light"),
    ]
    assert sorted(costs.values()) == [0, 1, 2]


def test_between_equal_nodes_the_one_left_less_stranded_goes_first() -> None:
    # Same total load; removing the CPU-heavy replica evens out its node's resources.
    nodes = [load("a", 6, 2), load("b", 6, 2)]
    replicas = [
        replica("memory-heavy", "a", cpu=0.1, memory=1.9),
        replica("cpu-heavy", "b", cpu=1.9, memory=0.1),
    ]
    costs = deletion_costs(replicas, nodes, CONFIG)
    assert costs[PodRef("ns", "cpu-heavy")] < costs[PodRef("ns", "memory-heavy")]
    assert stranded(load("x", 5, 5), ["cpu", "memory"]) == 0.0


def test_a_replica_on_no_known_node_goes_first_and_costs_become_annotations() -> None:
    costs = deletion_costs(
        [replica("placed", "a"), replica("pending", "")], [load("a", 5, 5)], CONFIG
    )
    assert costs[PodRef("ns", "pending")] == 0
    assert deletion_cost_annotations(costs)[PodRef("ns", "placed")] == {
        DELETION_COST_ANNOTATION: "1"
    }
