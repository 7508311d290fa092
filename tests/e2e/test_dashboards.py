"""Every query of every shipped dashboard answers with finite numbers from a real run.

The operator runs against the local cluster with rebalancing in DryRun, a
PredictiveScaler scales a Deployment under a rising load, and then each
panel's PromQL is sent to the real Prometheus the way Grafana would send it:
template variables resolved through their own label_values() queries.
"""

from __future__ import annotations

import math

from kubernetes import client

import predictive_scaler_dev.localcluster as local
from predictive_scaler.operator.resource import GROUP, PLURAL, VERSION
from predictive_scaler.promclient import connect, instant_query
from predictive_scaler_dev.demo.load import LoadDriver
from tests.fixtures.cluster import PrometheusQuery, create_deployment, wait_for
from tests.fixtures.dashboards import boards, load, panel_queries, substitute, variables
from tests.fixtures.operator import StartOperator, scaler

# Grafana makes $__rate_interval at least four scrape intervals; the local
# Prometheus scrapes every 2 s, and a wider window keeps the quantiles defined.
RATE_INTERVAL = "30s"


def label_values(cluster: local.LocalCluster, match: str, label: str) -> list[str]:
    values: list[str] = connect(cluster.prometheus_url).get_label_values(
        label, params={"match[]": match}
    )
    return values


def test_every_dashboard_query_answers_with_finite_numbers_from_a_real_run(
    start_operator: StartOperator,
    local_cluster: local.LocalCluster,
    core_v1: client.CoreV1Api,
    apps_v1: client.AppsV1Api,
    custom_objects: client.CustomObjectsApi,
    namespace: str,
    prometheus_query: PrometheusQuery,
) -> None:
    start_operator(
        {"PREDICTIVE_SCALER_REBALANCE_MODE": "DryRun", "PREDICTIVE_SCALER_REBALANCE_INTERVAL": "2s"}
    )
    create_deployment(apps_v1, namespace, "web", 2, cpu_request="1")
    # Sized from a capacity within a budget, so the budget's panels have series too.
    body = scaler(
        "web", "web", metric={"resource": "cpu", "capacityPerReplica": "1"}, max_replicas=6
    )
    body["spec"]["scaling"]["overloadBudget"] = "2%"
    custom_objects.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, body)
    with LoadDriver(core_v1, apps_v1, namespace, "web", lambda s: 0.6 + 0.02 * s) as driver:
        # The slowest series: a model chosen by a backtest over enough history.
        wait_for(
            lambda: bool(
                instant_query(
                    local_cluster.prometheus_url,
                    f'predictive_scaler_backtest_error{{namespace="{namespace}"}}',
                )
            ),
            timeout=150,
            what="a backtest selection in Prometheus",
        )
        prometheus_query(
            f'predictive_scaler_replicas{{namespace="{namespace}",kind="current"}} > 2',
            bool,
        )
        prometheus_query("predictive_scaler_balance_degree", bool)
        # A forecast is scored once its lead-time step has come due and settled.
        prometheus_query(f'predictive_scaler_forecast_coverage{{namespace="{namespace}"}}', bool)
        checked = 0
        for path in boards():
            board = load(path)
            values = {"__rate_interval": RATE_INTERVAL}
            for variable in variables(board):
                options = label_values(
                    local_cluster, substitute(variable.match, values), variable.label
                )
                assert options, f"{board['title']}: ${variable.name} has no values"
                if variable.name == "namespace":
                    assert namespace in options
                    options = [namespace]
                if variable.name == "name":
                    assert options == ["web"]
                # A multi-value variable with several options becomes a regex, as in Grafana.
                values[variable.name] = "|".join(options)
            for query in panel_queries(board):
                promql = substitute(query.expr, values)
                answer = instant_query(local_cluster.prometheus_url, promql)
                assert answer, f"{query.dashboard} / {query.panel}: empty for {promql}"
                for sample in answer:
                    assert math.isfinite(sample.value), (query.panel, promql, sample)
                checked += 1
        assert checked >= 20
    assert not driver.errors, driver.errors
