from __future__ import annotations

import math

import pytest

from predictive_scaler.rebalancing.nodes import (
    LoadHeaps,
    NodeLoad,
    ScoringConfig,
    balance_degree,
    cluster_means,
    node_score,
    scores,
)
from predictive_scaler.rebalancing.projection import projected_usage

CPU_ONLY = ScoringConfig(weights={"cpu": 1.0})


def node(name: str, cpu_used: float, cpu: float = 10.0, **usage: float) -> NodeLoad:
    return NodeLoad(name, {"cpu": cpu, "memory": 100.0}, {"cpu": cpu_used, **usage})


def test_the_cluster_mean_is_weighted_by_capacity() -> None:
    means = cluster_means([node("a", 2, cpu=4), node("b", 2, cpu=16)], ["cpu"])
    assert means["cpu"] == pytest.approx(4 / 20)


def test_score_is_the_log_of_mean_over_utilisation() -> None:
    # Cluster mean 0.5; a at 0.25 is twice as light (log 2), b at 0.75 heavier.
    nodes = [node("a", 2.5), node("b", 7.5)]
    found = scores(nodes, CPU_ONLY)
    assert found["a"] == pytest.approx(math.log(2))
    assert found["b"] == pytest.approx(math.log(0.5 / 0.75))


def test_an_idle_node_is_capped_not_infinite_and_an_unused_metric_is_left_out() -> None:
    means = {"cpu": 0.5, "memory": 0.0}
    idle = node("idle", 0.0)
    assert node_score(idle, means, {"cpu": 1.0}) == pytest.approx(math.log(100.0))
    # Memory unused cluster-wide says nothing: the score is cpu's alone.
    half = node("half", 2.5)
    assert node_score(half, means, {"cpu": 1.0, "memory": 1.0}) == pytest.approx(math.log(2.0))
    assert node_score(half, {"cpu": 0.0}, {"cpu": 1.0}) == 0.0


def test_an_even_cluster_has_degree_zero_and_skew_raises_it() -> None:
    even = scores([node("a", 5), node("b", 5), node("c", 5)], CPU_ONLY)
    assert balance_degree(even) == pytest.approx(0.0)
    skewed = scores([node("a", 9), node("b", 5), node("c", 1)], CPU_ONLY)
    assert balance_degree(skewed) > 0.5


def test_heaps_put_the_hottest_and_the_coolest_on_top() -> None:
    found = {"hot": -0.9, "warm": -0.3, "even": 0.0, "cool": 0.4, "cold": 1.2}
    heaps = LoadHeaps.split(found, threshold=-0.1)
    assert heaps.hottest() == ("hot", -0.9)
    assert [name for name, _ in heaps.coolest()] == ["cold", "cool", "even"]
    assert sorted(name for _, name in heaps.high) == ["hot", "warm"]


def test_a_rescored_node_moves_to_the_heap_its_new_score_belongs_to() -> None:
    heaps = LoadHeaps.split({"hot": -0.9, "warm": -0.3, "cool": 0.4}, threshold=-0.1)
    assert heaps.pop_hottest() == ("hot", -0.9)
    heaps.rescore("hot", -0.2)  # a move cooled it, not enough: hot again, behind nothing
    heaps.rescore("cool", -0.05)  # it took the pod: still low-load, no longer the coolest
    heaps.rescore("warm", 0.1)  # re-scored without being popped: its high entry goes stale
    assert [name for name, _ in heaps.coolest()] == ["warm", "cool"]
    assert heaps.pop_hottest() == ("warm", -0.3)  # stale: the planner compares scores
    assert heaps.pop_hottest() == ("hot", -0.2)
    assert heaps.pop_hottest() is None


def test_weights_must_be_usable() -> None:
    with pytest.raises(ValueError, match="positive weight"):
        ScoringConfig(weights={"cpu": 0.0})
    with pytest.raises(ValueError, match="finite"):
        ScoringConfig(weights={"cpu": -1.0})
    with pytest.raises(ValueError, match="no usage is measured for disk, network"):
        ScoringConfig(weights={"cpu": 1.0, "network": 1.0, "disk": 1.0})


def test_a_climbing_node_counts_at_its_forecast_peak_and_a_falling_one_as_measured() -> None:
    rising = [1.0 + 0.1 * i for i in range(20)]
    assert projected_usage(rising, 5) > rising[-1] + 0.3
    falling = rising[::-1]
    assert projected_usage(falling, 5) == falling[-1]
    assert projected_usage([2.0, 3.0], 5) == 3.0
    assert math.isnan(projected_usage([float("nan")] * 4, 5))
