"""A tenant's query priced beyond the budget is refused, and costs the cluster nothing.

Issue 23: four objects with ``max_over_time(...[30d:10ms])`` on a 1 s sync made
another object evaluate every 13-26 s instead of 2, a cheap Prometheus query
go from 1 ms to 41-64 ms, and a rebalancing cycle time out. Now such a query is
priced before it is sent (operator.query_cost) and refused with a condition. Prometheus's
own query log shows it is never sent while the cheap object's queries are.
"""

from __future__ import annotations

from kubernetes import client

import predictive_scaler_dev.localcluster as local
from predictive_scaler.operator.resource import GROUP, PLURAL, VERSION
from predictive_scaler_dev.demo.load import LoadDriver
from predictive_scaler_dev.localcluster.prometheus import logged_queries, query_log
from tests.fixtures.cluster import wait_for
from tests.fixtures.operator import (
    StartOperator,
    condition,
    hold_for,
    read_status,
    samples,
    scaler,
    wait_condition,
)

EXPENSIVE = 4
SYNC_SECONDS = 2.0
REBALANCE_SECONDS = 4.0


def test_queries_beyond_the_budget_are_refused_and_slow_nobody(
    local_cluster: local.LocalCluster,
    start_operator: StartOperator,
    steady_load: LoadDriver,
    custom_objects: client.CustomObjectsApi,
    namespace: str,
) -> None:
    with query_log(local_cluster) as log:
        run_tenants(start_operator, custom_objects, namespace)
        queries = logged_queries(log)
    # The log saw the operator's queries (the calm object's read its namespace's CPU)...
    assert any(f'namespace="{namespace}"' in query for query in queries), queries[-20:]
    # ... and never the expensive one: refused before it was sent, it cost Prometheus nothing.
    assert not [query for query in queries if "[30d:10ms]" in query]


def run_tenants(
    start_operator: StartOperator, custom_objects: client.CustomObjectsApi, namespace: str
) -> None:
    """One calm object and EXPENSIVE ones priced beyond the budget: the expensive are refused
    by name, the calm keeps its pace, and the rebalancer its rhythm."""
    operator = start_operator(
        {
            "PREDICTIVE_SCALER_REBALANCE_MODE": "DryRun",
            "PREDICTIVE_SCALER_REBALANCE_INTERVAL": f"{REBALANCE_SECONDS:g}s",
        }
    )
    calm = scaler(
        "calm",
        "web",
        metric={"resource": "cpu", "targetPerReplica": "500m"},
        mode="DryRun",
        syncPeriod=f"{SYNC_SECONDS:g}s",
    )
    custom_objects.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, calm)
    attack = (
        "max_over_time(sum(rate(container_cpu_usage_seconds_total"
        f'{{namespace="{namespace}"}}[8s]))[30d:10ms])'
    )
    for index in range(EXPENSIVE):
        body = scaler(
            f"expensive-{index}",
            "web",
            metric={"query": attack, "targetPerReplica": "1"},
            mode="DryRun",
            syncPeriod=f"{SYNC_SECONDS:g}s",
        )
        custom_objects.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, body)
    for index in range(EXPENSIVE):
        refused = wait_condition(
            custom_objects,
            namespace,
            f"expensive-{index}",
            "Ready",
            "False",
            "QueryTooExpensive",
        )
        assert "PREDICTIVE_SCALER_QUERY_MAX_SAMPLES" in refused["message"]
    wait_condition(custom_objects, namespace, "calm", "Ready", "True")

    def cycles() -> float:
        found = samples(operator, "predictive_scaler_rebalance_duration_seconds_count")
        return sum(found.values())

    def rebalance_errors() -> float:
        found = samples(operator, "predictive_scaler_reconcile_errors_total")
        return sum(v for labels, v in found.items() if dict(labels).get("loop") == "rebalance")

    before, errors_before = cycles(), rebalance_errors()

    def calm_on_time() -> None:
        late = condition(read_status(custom_objects, namespace, "calm"), "EvaluationsLate")
        assert late.get("status") != "True", late

    hold_for(5 * SYNC_SECONDS, calm_on_time)
    # The rebalancer kept its rhythm and never failed on a slow Prometheus.
    wait_for(lambda: cycles() >= before + 2, timeout=4 * REBALANCE_SECONDS + 30)
    assert rebalance_errors() == errors_before
