"""A PodDisruptionBudget that refuses every move: no taint left behind, one Event counted up.

Issue 23: the draining taint stayed on a node while a PDB blocked every move
off it, and each cycle posted new Events for the same pods (15 in 45 s for 4).
"""

from __future__ import annotations

import time
from collections import Counter

from kubernetes import client

import predictive_scaler_dev.localcluster as local
from predictive_scaler.operator.rebalancer import DRAINING_TAINT, Rebalancer
from tests.fixtures.cluster import KwokNodes, PrometheusQuery
from tests.fixtures.rebalancing import WORKLOAD, loaded, rebalancer_settings, skewed_pool

CYCLES = 3


def test_moves_a_pdb_refuses_leave_no_taint_and_one_event_per_pod(
    local_cluster: local.LocalCluster,
    crd: str,
    kube_api: client.ApiClient,
    kwok_nodes: KwokNodes,
    core_v1: client.CoreV1Api,
    apps_v1: client.AppsV1Api,
    policy_v1: client.PolicyV1Api,
    custom_objects: client.CustomObjectsApi,
    namespace: str,
    prometheus_query: PrometheusQuery,
) -> None:
    pool = skewed_pool(kwok_nodes, core_v1, apps_v1, custom_objects, namespace)
    budget = {
        "metadata": {"name": WORKLOAD},
        "spec": {"maxUnavailable": 0, "selector": {"matchLabels": {"app": WORKLOAD}}},
    }
    policy_v1.create_namespaced_pod_disruption_budget(namespace, budget)  # type: ignore[arg-type]
    with loaded(core_v1, apps_v1, namespace, pool, prometheus_query):
        settings = rebalancer_settings(local_cluster.prometheus_url, namespace, pool, "Auto")
        rebalancer = Rebalancer.from_settings(kube_api, settings)
        # A second apart on the rebalancer's clock, however long each takes on a busy
        # machine: all within one settle (24 s at a 2 s scrape).
        start = time.time()
        reports = [rebalancer.cycle(start + cycle) for cycle in range(CYCLES)]
    assert all(report.blocked and not report.evicted for report in reports)
    node = core_v1.read_node(pool.hot)
    taints = (node.spec.taints if node.spec else None) or []
    assert not any(t.key == DRAINING_TAINT for t in taints), "the draining taint was left"
    blocked = [
        e for e in core_v1.list_namespaced_event(namespace).items if e.reason == "EvictionBlocked"
    ]
    # One Event per refused pod, counted up each cycle it was refused, not a new Event
    # each time. Which pod a cycle picks follows measured usage, which a scrape can tip
    # between pods of equal load, so the counts are checked against the cycles' reports.
    counts = Counter(e.involved_object.name for e in blocked)
    assert max(counts.values()) == 1, f"several Events for one pod: {counts}"
    refused = Counter(pod.name for report in reports for pod in report.blocked)
    assert {e.involved_object.name: e.count or 1 for e in blocked} == refused
    # A pod refused is kept out of the plans for a settle: the next cycles try the pods
    # beside it, instead of spending their move on the same refusal.
    assert set(refused.values()) == {1}, f"a pod refused twice within a settle: {refused}"
