"""The rebalancer's cool-down stamps land on the object they are meant for.

Stamps were once keyed by (scope, name), the scope being the word "node" or a
PredictiveScaler's namespace: a PredictiveScaler in a namespace called `node`,
named like a Node, had its workload's streak written onto that Node instead.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

import predictive_scaler_dev.localcluster as local
from predictive_scaler.operator.rebalancer import REBALANCED_AT, Rebalancer
from predictive_scaler.operator.resource import GROUP, PLURAL, VERSION
from predictive_scaler_dev.localcluster.kube import create_namespace
from tests.fixtures.cluster import (
    DEADLINE,
    KwokNodes,
    PrometheusQuery,
    wait_for,
)
from tests.fixtures.rebalancing import loaded, rebalancer_settings, skewed_pool

COLLIDING_NAMESPACE = "node"


@pytest.fixture
def node_namespace(core_v1: client.CoreV1Api) -> Iterator[str]:
    """The namespace literally called `node`, gone again afterwards."""

    def gone() -> bool:
        try:
            core_v1.read_namespace(COLLIDING_NAMESPACE)
        except ApiException as error:
            if error.status == 404:
                return True
            raise
        return False

    wait_for(gone, what=f"no namespace {COLLIDING_NAMESPACE!r} left from an earlier run")
    create_namespace(core_v1, COLLIDING_NAMESPACE, timeout=DEADLINE)
    yield COLLIDING_NAMESPACE
    core_v1.delete_namespace(COLLIDING_NAMESPACE)
    wait_for(gone, what=f"namespace {COLLIDING_NAMESPACE!r} deleted")


def test_a_scaler_named_like_a_node_in_namespace_node_keeps_its_own_stamp(
    local_cluster: local.LocalCluster,
    crd: str,
    kube_api: client.ApiClient,
    kwok_nodes: KwokNodes,
    core_v1: client.CoreV1Api,
    apps_v1: client.AppsV1Api,
    custom_objects: client.CustomObjectsApi,
    node_namespace: str,
    prometheus_query: PrometheusQuery,
) -> None:
    # Named like the node its pods are moved off: (namespace, name) = ("node", <node>).
    pool = skewed_pool(
        kwok_nodes, core_v1, apps_v1, custom_objects, node_namespace, scaler_name=str
    )
    with loaded(core_v1, apps_v1, node_namespace, pool, prometheus_query):
        settings = rebalancer_settings(local_cluster.prometheus_url, node_namespace, pool, "Auto")
        now = time.time()
        report = Rebalancer.from_settings(kube_api, settings).cycle(now)
    assert report.evicted, "a pod should have moved off the hot node"
    stamp = f"{now:.0f}"
    node = core_v1.read_node(pool.hot)
    node_notes = (node.metadata.annotations if node.metadata else None) or {}
    assert node_notes.get(REBALANCED_AT) == stamp  # the node's time, not the workload's streak
    found: Any = custom_objects.get_namespaced_custom_object(
        GROUP, VERSION, node_namespace, PLURAL, pool.hot
    )
    assert found["metadata"]["annotations"][REBALANCED_AT] == f"{stamp}/{stamp}"
