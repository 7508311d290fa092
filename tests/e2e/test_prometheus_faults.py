"""Prometheus misbehaving: NaN, +Inf, no series, a jump of seven orders, answers past the timeout.

Replicas hold within [minReplicas, maxReplicas] (never zero), the conditions
say why, and the operator recovers by itself once Prometheus behaves.
"""

from __future__ import annotations

import math

from kubernetes import client

import predictive_scaler_dev.localcluster as local
from predictive_scaler.operator.resource import GROUP, PLURAL, VERSION
from predictive_scaler_dev.demo.load import LoadDriver
from predictive_scaler_dev.demo.process import OperatorProcess
from tests.fixtures.cluster import create_deployment
from tests.fixtures.faults import DelayingProxy, FaultSeries
from tests.fixtures.operator import (
    StartOperator,
    hold_for,
    read_status,
    replicas,
    replicas_stay,
    scaler,
    wait_condition,
)

MIN, MAX = 2, 6


def on_series(name: str, query: str) -> dict[str, object]:
    return scaler(
        name,
        name,
        metric={"query": query, "targetPerReplica": "1"},
        min_replicas=MIN,
        max_replicas=MAX,
    )


def within_bounds_and_held(apps: client.AppsV1Api, namespace: str, names: list[str]) -> None:
    for name in names:
        assert replicas(apps, namespace, name) == MIN, name


def test_nan_inf_and_missing_series_hold_and_a_huge_jump_stops_at_max_replicas(
    operator: OperatorProcess,
    local_cluster: local.LocalCluster,
    custom_objects: client.CustomObjectsApi,
    apps_v1: client.AppsV1Api,
    namespace: str,
) -> None:
    series = FaultSeries(local_cluster, namespace)
    series.set("nan", math.nan)
    series.set("inf", math.inf)
    series.set("jump", 0.5)
    cases = {
        "nan": series.query("nan"),
        "inf": series.query("inf"),
        "empty": series.query("never-exported"),
        "jump": series.query("jump"),
    }
    with series.served():
        for name, query in cases.items():
            create_deployment(apps_v1, namespace, name, MIN)
            custom_objects.create_namespaced_custom_object(
                GROUP, VERSION, namespace, PLURAL, on_series(name, query)
            )
        for name in ("nan", "inf", "empty"):
            metrics = wait_condition(
                custom_objects, namespace, name, "MetricsAvailable", "False", "MissingMetrics"
            )
            assert "no load samples" in metrics["message"] or "no samples" in metrics["message"]
        wait_condition(custom_objects, namespace, "jump", "Ready", "True", timeout=90)
        assert replicas(apps_v1, namespace, "jump") == MIN

        series.set("jump", 5e6)  # seven orders of magnitude in one scrape
        wait_condition(
            custom_objects, namespace, "jump", "ScalingLimited", "True", "TooManyReplicas"
        )

        def bounded() -> None:
            assert replicas(apps_v1, namespace, "jump") <= MAX
            within_bounds_and_held(apps_v1, namespace, ["nan", "inf", "empty"])

        hold_for(6, bounded)
        assert replicas(apps_v1, namespace, "jump") == MAX
        for name in ("nan", "inf", "empty"):
            status = read_status(custom_objects, namespace, name)
            assert status["decision"].startswith(f"holding {MIN} replicas"), status["decision"]
    assert operator.alive()


def test_a_prometheus_slower_than_the_timeout_holds_replicas_and_recovers(
    start_operator: StartOperator,
    local_cluster: local.LocalCluster,
    custom_objects: client.CustomObjectsApi,
    core_v1: client.CoreV1Api,
    apps_v1: client.AppsV1Api,
    namespace: str,
) -> None:
    with DelayingProxy(local_cluster.ports.prometheus) as proxy:
        # A query timeout shorter than the default 10 s, so the proxy's delay outlasts it soon.
        operator = start_operator(
            {
                "PROMETHEUS_URL": proxy.url,
                "PREDICTIVE_SCALER_REBALANCE_MODE": "Off",
                "PREDICTIVE_SCALER_QUERY_TIMEOUT": "3s",
            }
        )
        create_deployment(apps_v1, namespace, "web", MIN, cpu_request="1")
        with LoadDriver(core_v1, apps_v1, namespace, "web", lambda _: 0.5):
            body = scaler(
                "web",
                "web",
                metric={"resource": "cpu", "targetPerReplica": "500m"},
                min_replicas=MIN,
                max_replicas=MAX,
            )
            custom_objects.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, body)
            wait_condition(custom_objects, namespace, "web", "Ready", "True", timeout=90)
            held = replicas(apps_v1, namespace, "web")

            proxy.delay = 5.0
            slow = wait_condition(
                custom_objects, namespace, "web", "MetricsAvailable", "False", "Timeout"
            )
            assert "did not answer within 3 s" in slow["message"]
            hold_for(6, lambda: replicas_stay(apps_v1, namespace, "web", held))
            status = read_status(custom_objects, namespace, "web")
            assert status["decision"].startswith(f"holding {held} replicas")

            proxy.delay = 0.0
            wait_condition(custom_objects, namespace, "web", "MetricsAvailable", "True", timeout=60)
            wait_condition(custom_objects, namespace, "web", "Ready", "True")
            assert operator.alive()
