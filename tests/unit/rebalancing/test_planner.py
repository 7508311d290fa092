from __future__ import annotations

from typing import Any

import pytest

from predictive_scaler.rebalancing.cooldown import Cooling
from predictive_scaler.rebalancing.nodes import NodeLoad, ScoringConfig
from predictive_scaler.rebalancing.planner import Limits, plan_moves
from predictive_scaler.rebalancing.pods import (
    NodeInfo,
    PodInfo,
    Requirement,
    Taint,
    Toleration,
    seconds_to_limit,
    why_not_movable,
)
from predictive_scaler.rebalancing.predicates import why_not_fits
from predictive_scaler.refs import PodRef, WorkloadRef

CPU_ONLY = ScoringConfig(weights={"cpu": 1.0})


def make_node(name: str, pods: list[PodInfo], cpu: float = 10.0, **extra: Any) -> NodeInfo:
    used = sum(p.usage.get("cpu", 0.0) for p in pods if p.node == name)
    load = NodeLoad(name, {"cpu": cpu}, {"cpu": used})
    return NodeInfo(load, {"cpu": cpu, "memory": 64.0, "pods": 110}, **extra)


OWN_WORKLOAD = WorkloadRef("", "", "own")


def make_pod(
    name: str, node: str, cpu: float, workload: WorkloadRef | None = OWN_WORKLOAD, **extra: Any
) -> PodInfo:
    values: dict[str, Any] = {
        "workload": WorkloadRef("ns", "Deployment", name) if workload == OWN_WORKLOAD else workload,
        "owner_kind": "ReplicaSet",
        "requests": {"cpu": 0.5, "memory": 1.0},
        "usage": {"cpu": cpu},
        "opted_in": True,
    }
    values.update(extra)
    return PodInfo(name=name, namespace="ns", node=node, **values)


def skewed() -> tuple[list[NodeInfo], list[PodInfo]]:
    pods = [make_pod(f"hot-{i}", "hot", 2.0) for i in range(4)]
    pods += [make_pod(f"cool-{i}", "cool", 0.5) for i in range(2)]
    pods += [make_pod("cold-0", "cold", 0.2)]
    nodes = [make_node(n, pods) for n in ("hot", "cool", "cold")]
    return nodes, pods


def test_moves_go_from_the_hottest_node_to_cooler_ones_and_lower_the_degree() -> None:
    nodes, pods = skewed()
    plan = plan_moves(nodes, pods, CPU_ONLY, Limits(per_node=3, per_cycle=3))
    assert plan.moves
    assert {m.source for m in plan.moves} == {"hot"}
    assert {m.destination for m in plan.moves} <= {"cool", "cold"}
    assert plan.degree_after < plan.degree_before / 2
    degrees = [m.degree_after for m in plan.moves]
    assert degrees == sorted(degrees, reverse=True)


def test_limits_per_node_per_workload_and_per_cycle_hold() -> None:
    nodes, pods = skewed()
    same_workload = [
        make_pod(p.name, p.node, p.usage["cpu"], workload=WorkloadRef("ns", "Deployment", "one"))
        for p in pods
    ]
    plan = plan_moves(nodes, same_workload, CPU_ONLY, Limits(per_node=3, per_workload=1))
    assert len(plan.moves) == 1
    assert any(s.reason == "WorkloadLimit" for s in plan.skipped)
    assert len(plan_moves(nodes, pods, CPU_ONLY, Limits(per_node=1)).moves) == 1
    assert len(plan_moves(nodes, pods, CPU_ONLY, Limits(per_node=5, per_cycle=2)).moves) == 2


def test_pods_that_must_stay_are_never_planned() -> None:
    nodes, pods = skewed()
    stays = [
        make_pod("ds", "hot", 3.0, owner_kind="DaemonSet"),
        make_pod("mirror", "hot", 3.0, mirror=True),
        make_pod("bare", "hot", 3.0, workload=None),
        make_pod("critical", "hot", 3.0, priority=2_000_001_000),
        make_pod("leaving", "hot", 3.0, terminating=True),
        make_pod("disk", "hot", 3.0, local_storage=True),
        make_pod("other", "hot", 3.0, opted_in=False),
    ]
    only_stayers = [p for p in pods if p.node != "hot"] + stays
    nodes = [make_node(n.name, only_stayers) for n in nodes]
    plan = plan_moves(nodes, only_stayers, CPU_ONLY, Limits(per_node=10, per_cycle=10))
    assert plan.moves == ()
    assert {s.pod: s.reason for s in plan.skipped} == {
        PodRef("ns", "ds"): "DaemonSetPod",
        PodRef("ns", "mirror"): "MirrorPod",
        PodRef("ns", "bare"): "BarePod",
        PodRef("ns", "critical"): "SystemCritical",
        PodRef("ns", "leaving"): "Terminating",
        PodRef("ns", "disk"): "LocalStorage",
        PodRef("ns", "other"): "NotOptedIn",
    }
    assert why_not_movable(stays[5], allow_local_storage=True) is None


def test_cooling_pods_and_nodes_are_left_alone() -> None:
    nodes, pods = skewed()
    every_hot_pod = Cooling(pods=frozenset(p.ref for p in pods if p.node == "hot"))
    assert plan_moves(nodes, pods, CPU_ONLY, cooling=every_hot_pod).moves == ()
    assert plan_moves(nodes, pods, CPU_ONLY, cooling=Cooling(nodes=frozenset({"hot"}))).moves == ()
    cold = Cooling(nodes=frozenset({"cold"}))
    moved = plan_moves(nodes, pods, CPU_ONLY, Limits(per_node=3), cooling=cold)
    assert {m.destination for m in moved.moves} == {"cool"}


def test_lower_priority_then_nearest_to_its_limit_goes_first() -> None:
    nodes, pods = skewed()
    ordered = [
        make_pod("hot-0", "hot", 2.0, priority=100),
        make_pod("hot-1", "hot", 2.0, priority=0, limits={"cpu": 4.0}, cpu_history=(1, 1.1, 1.2)),
        make_pod("hot-2", "hot", 2.0, priority=0, limits={"cpu": 2.5}, cpu_history=(1, 1.5, 2.0)),
        make_pod("hot-3", "hot", 2.0, priority=100),
    ] + [p for p in pods if p.node != "hot"]
    plan = plan_moves(nodes, ordered, CPU_ONLY, Limits(per_node=1))
    assert [m.pod for m in plan.moves] == [PodRef("ns", "hot-2")]


def test_seconds_to_limit_follows_the_linear_trend() -> None:
    rising = make_pod(
        "p", "n", 1.0, limits={"cpu": 3.0}, cpu_history=(1.0, 1.5, 2.0), history_step=60
    )
    assert seconds_to_limit(rising) == pytest.approx(120.0)
    flat = make_pod("q", "n", 1.0, limits={"cpu": 3.0}, cpu_history=(2.0, 2.0))
    assert seconds_to_limit(flat) == float("inf")
    assert seconds_to_limit(make_pod("r", "n", 1.0, cpu_history=(1.0, 2.0))) == float("inf")


def test_predicates_refuse_what_the_scheduler_would_refuse() -> None:
    pod = make_pod("p", "a", 1.0)
    free = make_node("b", [])
    assert why_not_fits(pod, free, {"pods": 0}, []) is None
    assert why_not_fits(pod, make_node("b", [], cpu=0.25), {"pods": 0}, []) == "Insufficient cpu"
    assert why_not_fits(pod, make_node("b", [], unschedulable=True), {}, []) == "Unschedulable"
    picky = make_pod("p", "a", 1.0, node_selector={"zone": "x"})
    assert why_not_fits(picky, free, {}, []) == "NodeSelectorMismatch"
    assert why_not_fits(picky, make_node("b", [], labels={"zone": "x"}), {}, []) is None
    affine = make_pod("p", "a", 1.0, affinity_terms=((Requirement("disk", "In", ("ssd",)),),))
    assert why_not_fits(affine, free, {}, []) == "NodeAffinityMismatch"
    tainted = make_node("b", [], taints=(Taint("dedicated", "gpu"),))
    assert why_not_fits(pod, tainted, {}, []) == "UntoleratedTaint dedicated"
    tolerant = make_pod("p", "a", 1.0, tolerations=(Toleration("dedicated", "Equal", "gpu"),))
    assert why_not_fits(tolerant, tainted, {}, []) is None
    soft = make_node("b", [], taints=(Taint("draining", effect="PreferNoSchedule"),))
    assert why_not_fits(pod, soft, {}, []) is None
    lonely = make_pod("p", "a", 1.0, labels={"app": "db"}, anti_affinity=({"app": "db"},))
    twin = make_pod("q", "b", 1.0, labels={"app": "db"})
    assert why_not_fits(lonely, free, {}, [twin]) == "PodAntiAffinity"


def test_a_destination_that_would_turn_hot_is_not_used() -> None:
    pods = [make_pod("big", "hot", 6.0), make_pod("small", "warm", 3.5)]
    nodes = [make_node("hot", pods), make_node("warm", pods)]
    # Moving `big` would make `warm` hotter than `hot` leaves: ping-pong, refused.
    plan = plan_moves(nodes, pods, CPU_ONLY)
    assert plan.moves == ()
    assert {s.reason for s in plan.skipped} == {"NoDestination"}


def test_a_cooling_workload_is_not_moved_again() -> None:
    nodes, pods = skewed()
    cooling = Cooling(
        workloads=frozenset(p.workload for p in pods if p.node == "hot" and p.workload)
    )
    plan = plan_moves(nodes, pods, CPU_ONLY, cooling=cooling)
    assert plan.moves == ()
    assert {s.reason for s in plan.skipped if s.node == "hot"} == {"CoolDown"}


def test_a_pod_whose_eviction_was_refused_sits_out_and_the_next_one_moves() -> None:
    nodes, pods = skewed()
    first = plan_moves(nodes, pods, CPU_ONLY)
    assert first.moves
    refused = first.moves[0].pod
    again = plan_moves(nodes, pods, CPU_ONLY, cooling=Cooling(refused=frozenset({refused})))
    assert again.moves
    assert refused not in {move.pod for move in again.moves}
    assert {s.reason for s in again.skipped if s.pod == refused} == {"RecentlyRefused"}
