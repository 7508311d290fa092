"""A node whose usage the source does not report takes no part in rebalancing."""

from __future__ import annotations

import pytest
from kubernetes import client

from predictive_scaler.operator.prometheus import measured_nodes
from predictive_scaler.operator.snapshot import node_infos
from predictive_scaler.operator.sources import CPU, MEMORY, Usage

pytestmark = pytest.mark.unit


def node(name: str) -> client.V1Node:
    return client.V1Node(
        metadata=client.V1ObjectMeta(name=name),
        status=client.V1NodeStatus(allocatable={"cpu": "4", "memory": "8Gi", "pods": "110"}),
    )


def test_a_node_without_usage_is_left_out_not_taken_as_idle() -> None:
    # Taken as idle, the two unmeasured nodes dragged the cluster's mean to half of
    # what the measured ones used: those looked hot, and their pods were evicted.
    half = {CPU: 2.0, MEMORY: 4 * 2**30}
    usage = Usage({"n1": half, "n2": half}, {})
    infos = node_infos([node("n1"), node("n2"), node("n3"), node("n4")], usage)
    assert [info.load.name for info in infos] == ["n1", "n2"]
    assert all(info.load.usage == half for info in infos)


def test_a_node_missing_a_metric_others_report_is_unmeasured() -> None:
    cpu = {"n1": 1.0, "n2": 1.5, "n3": 0.5}
    memory = {"n1": 2.0, "n2": 3.0}
    assert set(measured_nodes(cpu, memory)) == {"n1", "n2"}
    # A metric no node reports is 0 for all, as the weights without it would score them.
    assert measured_nodes(cpu, {}) == {n: {CPU: v, MEMORY: 0.0} for n, v in cpu.items()}


def test_the_scale_in_ranking_takes_an_unmeasured_node_as_idle() -> None:
    # Most often a new node: its pods go last, as an idle node's do.
    usage = Usage({"n1": {CPU: 2.0, MEMORY: 4 * 2**30}}, {})
    infos = node_infos([node("n1"), node("new")], usage, unmeasured_as_idle=True)
    assert {info.load.name: info.load.usage[CPU] for info in infos} == {"n1": 2.0, "new": 0.0}
