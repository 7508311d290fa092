"""The draining taint is written onto a node's taints as they are, never over another writer's."""

from __future__ import annotations

from kubernetes import client

from predictive_scaler.operator.evictor import (
    DRAINING_TAINT,
    with_draining_taint,
    without_draining_taint,
)
from predictive_scaler.operator.kube import Kubernetes
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
