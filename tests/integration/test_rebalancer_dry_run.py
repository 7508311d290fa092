"""The rebalancer in DryRun: it plans and reports against the real cluster, and moves nothing."""

from __future__ import annotations

import time

import pytest
from kubernetes import client

import predictive_scaler_dev.localcluster as local
from predictive_scaler.operator.rebalancer import DRAINING_TAINT, Rebalancer
from predictive_scaler.operator.resource import GROUP, PLURAL, VERSION
from predictive_scaler_dev.localcluster.kube import running_pods
from tests.fixtures.cluster import (
    KwokNodes,
    PrometheusQuery,
)
from tests.fixtures.rebalancing import loaded, rebalancer_settings, skewed_pool


def test_dry_run_plans_and_reports_without_evicting(
    local_cluster: local.LocalCluster,
    crd: str,
    kube_api: client.ApiClient,
    kwok_nodes: KwokNodes,
    core_v1: client.CoreV1Api,
    apps_v1: client.AppsV1Api,
    custom_objects: client.CustomObjectsApi,
    namespace: str,
    prometheus_query: PrometheusQuery,
) -> None:
    pool = skewed_pool(kwok_nodes, core_v1, apps_v1, custom_objects, namespace)
    with loaded(core_v1, apps_v1, namespace, pool, prometheus_query):
        before = {p.metadata.name for p in running_pods(core_v1, namespace, "batch") if p.metadata}
        settings = rebalancer_settings(local_cluster.prometheus_url, namespace, pool, "DryRun")
        report = Rebalancer.from_settings(kube_api, settings).cycle(time.time())
    assert report.plan is not None
    assert report.plan.moves
    assert {m.source for m in report.plan.moves} == {pool.hot}
    assert report.evicted == ()
    assert {
        p.metadata.name for p in running_pods(core_v1, namespace, "batch") if p.metadata
    } == before
    reasons = {e.reason for e in core_v1.list_namespaced_event(namespace).items}
    assert "WouldEvict" in reasons
    assert "Evicted" not in reasons
    node = core_v1.read_node(pool.hot)
    assert not any(t.key == DRAINING_TAINT for t in (node.spec.taints if node.spec else None) or [])


@pytest.mark.parametrize(
    "conditions",
    [
        # What the operator writes for an object whose query reads another namespace.
        [
            {
                "type": "Ready",
                "status": "False",
                "reason": "QueryOutsideNamespace",
                "message": "spec.metric.query: every selector needs namespace=...",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
            }
        ],
        # Not evaluated yet: it may still be refused.
        [],
    ],
    ids=["refused", "not-evaluated"],
)
def test_a_scaler_that_cannot_act_opts_its_workload_out(
    conditions: list[dict[str, str]],
    local_cluster: local.LocalCluster,
    crd: str,
    kube_api: client.ApiClient,
    kwok_nodes: KwokNodes,
    core_v1: client.CoreV1Api,
    apps_v1: client.AppsV1Api,
    custom_objects: client.CustomObjectsApi,
    namespace: str,
    prometheus_query: PrometheusQuery,
) -> None:
    pool = skewed_pool(kwok_nodes, core_v1, apps_v1, custom_objects, namespace)
    custom_objects.patch_namespaced_custom_object_status(
        GROUP, VERSION, namespace, PLURAL, "batch", {"status": {"conditions": conditions}}
    )
    with loaded(core_v1, apps_v1, namespace, pool, prometheus_query):
        settings = rebalancer_settings(local_cluster.prometheus_url, namespace, pool, "DryRun")
        report = Rebalancer.from_settings(kube_api, settings).cycle(time.time())
    assert report.plan is not None
    # The node is as hot as in the test above, but nothing on it is the blocked object's.
    assert report.plan.moves == ()
    assert report.plan.degree_before > 0.1
