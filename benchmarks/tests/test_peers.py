from __future__ import annotations

import pytest

from benchmarks.peers import (
    PER_CYCLE,
    PER_NODE,
    ToolRun,
    _loads,
    _overutilised,
    _row,
    descheduler_policy,
)
from benchmarks.peers_cluster import (
    AGENT_CPU,
    MEAN_CPU_UTILISATION,
    NODE_CORES,
    PODS_PER_NODE,
    REPLICAS,
    workloads,
)


def test_the_descheduler_runs_low_node_utilization_on_actual_usage_with_our_limits() -> None:
    policy = descheduler_policy()
    assert policy["maxNoOfPodsToEvictPerNode"] == PER_NODE
    assert policy["maxNoOfPodsToEvictTotal"] == PER_CYCLE
    assert policy["metricsProviders"] == [{"source": "KubernetesMetrics"}]
    (profile,) = policy["profiles"]
    assert profile["plugins"]["balance"]["enabled"] == ["LowNodeUtilization"]
    args = next(c["args"] for c in profile["pluginConfig"] if c["name"] == "LowNodeUtilization")
    assert args["useDeviationThresholds"] is True
    assert args["thresholds"] == args["targetThresholds"]
    assert args["metricsUtilization"] == {"source": "KubernetesMetrics"}


def test_workloads_fill_the_cluster_to_its_mean_utilisation() -> None:
    specs = workloads(6, seed=6)
    assert len(specs) * REPLICAS == 6 * PODS_PER_NODE
    cpu = sum(w.cpu for w in specs) * REPLICAS + 6 * AGENT_CPU
    assert cpu == pytest.approx(MEAN_CPU_UTILISATION * 6 * NODE_CORES, rel=0.01)
    assert len({w.cpu for w in specs}) > 1  # the trace's spread, not one size
    assert workloads(6, seed=6) == specs


def test_overutilised_means_above_the_mean_by_the_deviation() -> None:
    truth = {"a": (12.0, 10.0), "b": (4.0, 10.0), "c": (4.0, 10.0)}
    assert _overutilised(_loads(truth, ["a", "b", "c"])) == {"a"}
    assert _overutilised(_loads({}, ["a", "b"])) == set()


def test_a_row_reports_how_much_lower_the_degree_ends() -> None:
    run = ToolRun("descheduler", 6, 48, degree_before=2.0, degree_after=0.5, evictions=8)
    run.cycle_seconds = [1.0, 3.0, 2.0]
    row = _row(run)
    assert row[2] == "2.000 -> 0.500 (75% lower)"
    assert row[4] == "not reached"  # no cycle that halved it was recorded
    run.trajectory = [(4, 1.5), (6, 0.9), (8, 0.5)]
    assert _row(run)[4] == "6"
    assert row[-1] == "2.00 s"


def test_each_tool_is_held_to_the_balance_the_other_ended_with() -> None:
    theirs = ToolRun("descheduler", 6, 48, degree_before=2.0, degree_after=0.8)
    theirs.trajectory = [(4, 1.4), (8, 1.0), (12, 0.8)]
    ours = ToolRun("predictive-scaler", 6, 48, degree_before=2.0, degree_after=0.4)
    ours.trajectory = [(4, 1.2), (8, 0.7), (12, 0.4)]
    assert _row(ours, theirs)[5] == "8"  # the descheduler's 0.8, reached after 8
    assert _row(theirs, ours)[5] == "not reached"
    assert _row(ours)[5] == "-"
