"""The draining taint is written onto a node's taints as they are, never over another writer's."""

from __future__ import annotations

from kubernetes import client

from predictive_scaler.operator.evictor import (
    DRAINING_TAINT,
    with_draining_taint,
    without_draining_taint,
)
from predictive_scaler.operator.kube import Kubernetes
from predictive_scaler.operator.rebalancer import lift_stray_taints
from predictive_scaler.operator.settings import OperatorSettings
from tests.fixtures.cluster import KwokNodes

OTHER = client.V1Taint(key="example.com/being-deleted", effect="NoSchedule", value="true")


def taint_keys(core_v1: client.CoreV1Api, node: str) -> list[str]:
    spec = core_v1.read_node(node).spec
    return [taint.key for taint in (spec.taints if spec else None) or []]


def test_a_taint_another_controller_adds_meanwhile_is_kept(
    kube_api: client.ApiClient, core_v1: client.CoreV1Api, kwok_nodes: KwokNodes
) -> None:
    (node,) = kwok_nodes.create()
    seen: list[list[str]] = []

    def draining_while_another_taints(taints: list[client.V1Taint]) -> list[client.V1Taint] | None:
        seen.append([t.key for t in taints])
        if len(seen) == 1:
            # Another controller (cluster-autoscaler, say) taints the node between
            # this read and this write: a whole-list patch would erase its taint.
            written = kube_api.sanitize_for_serialization([*taints, OTHER])  # type: ignore[no-untyped-call]
            core_v1.patch_node(node, {"spec": {"taints": written}})
        return with_draining_taint(taints)

    assert Kubernetes(kube_api).update_taints(node, draining_while_another_taints)

    keys = taint_keys(core_v1, node)
    assert OTHER.key in keys
    assert DRAINING_TAINT in keys
    assert len(seen) == 2, "the stale write was refused (409) and made again on the new list"
    # Lifted, it leaves the other taint where it is.
    assert Kubernetes(kube_api).update_taints(node, without_draining_taint)
    keys = taint_keys(core_v1, node)
    assert OTHER.key in keys
    assert DRAINING_TAINT not in keys


def draining(core_v1: client.CoreV1Api, kube_api: client.ApiClient, node: str) -> None:
    assert Kubernetes(kube_api).update_taints(node, with_draining_taint)
    assert DRAINING_TAINT in taint_keys(core_v1, node)


def test_a_draining_taint_no_cycle_will_visit_is_lifted_at_start_up(
    kube_api: client.ApiClient, core_v1: client.CoreV1Api, kwok_nodes: KwokNodes
) -> None:
    inside, outside = kwok_nodes.create(count=2)
    core_v1.patch_node(inside, {"metadata": {"labels": {"pool": "balanced"}}})
    for node in (inside, outside):
        draining(core_v1, kube_api, node)
    kube = Kubernetes(kube_api)
    narrowed = OperatorSettings.from_environment(
        {
            "PROMETHEUS_URL": "http://prometheus:9090",
            "PREDICTIVE_SCALER_REBALANCE_NODES": "pool=balanced",
        }
    )
    # Outside REBALANCE_NODES no cycle lifts it; inside, the cycles still decide.
    assert outside in lift_stray_taints(kube, narrowed)
    assert DRAINING_TAINT not in taint_keys(core_v1, outside)
    assert DRAINING_TAINT in taint_keys(core_v1, inside)
    # With rebalancing Off, no cycle runs at all.
    off = OperatorSettings.from_environment(
        {"PROMETHEUS_URL": "http://prometheus:9090", "PREDICTIVE_SCALER_REBALANCE_MODE": "Off"}
    )
    assert inside in lift_stray_taints(kube, off)
    assert DRAINING_TAINT not in taint_keys(core_v1, inside)
