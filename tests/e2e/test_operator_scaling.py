"""The operator on a real trace: scales up ahead of the load, down after it, within its limits."""

from __future__ import annotations

import datetime
import math
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kubernetes import client
from prometheus_api_client import PrometheusConnect

import predictive_scaler_dev.localcluster as local
from predictive_scaler.operator.resource import GROUP, PLURAL, VERSION
from predictive_scaler.promclient import instant_query
from predictive_scaler_dev.demo.load import LoadDriver, Tick
from predictive_scaler_dev.demo.process import OperatorProcess
from tests.fixtures.cluster import create_deployment, wait_for
from tests.fixtures.load import PEAK_CORES, SECONDS_PER_STEP, nasa_morning, replay_curve
from tests.fixtures.operator import (
    condition,
    events_for,
    kubectl,
    read_status,
    scaler,
)

CAPACITY = 1.0  # cores one replica can carry: its CPU request
TARGET = 0.5  # cores per replica the scaler sizes for
WARMUP = 40.0  # seconds of history before the operator may decide


def test_operator_scales_ahead_of_a_real_trace_and_back_within_its_behavior(
    operator: OperatorProcess,
    local_cluster: local.LocalCluster,
    core_v1: client.CoreV1Api,
    apps_v1: client.AppsV1Api,
    custom_objects: client.CustomObjectsApi,
    namespace: str,
    traces_dir: Path,
) -> None:
    curve = nasa_morning(traces_dir)
    duration = (curve.size - 1) * SECONDS_PER_STEP
    create_deployment(apps_v1, namespace, "web", 2, cpu_request=str(CAPACITY))
    body = scaler(
        "web",
        "web",
        metric={"resource": "cpu", "targetPerReplica": f"{round(TARGET * 1000)}m"},
        min_replicas=2,
        max_replicas=10,
    )
    body["spec"]["scaling"]["behavior"] = {
        "scaleDown": {
            "stabilizationWindowSeconds": 10,
            "policies": [{"type": "Pods", "value": 1, "periodSeconds": 4}],
        }
    }
    custom_objects.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, body)

    driver = replay_curve(core_v1, apps_v1, namespace, "web", curve)
    ticks = driver.ticks
    assert not driver.errors, driver.errors
    assert len(ticks) > duration * 0.8, "the driver fell behind"

    # Never above maxReplicas.
    assert max(t.replicas for t in ticks) <= 10
    # It had to scale: the trace's peak needs more than the initial two replicas carry.
    assert max(t.load for t in ticks) > 2 * CAPACITY
    # Up before the load exceeded what the replicas at the time could carry.
    first_up = next(t for t in ticks if t.replicas > 2)
    first_beyond_initial = next(t for t in ticks if t.load > 2 * CAPACITY)
    assert first_up.seconds < first_beyond_initial.seconds, (first_up, first_beyond_initial)
    overloaded = [t for t in ticks if t.seconds > WARMUP and t.load > t.running * CAPACITY]
    assert not overloaded, overloaded[:5]
    # Down after the peak, no faster than one pod per 4 s (the scale-down policy).
    peak = max(ticks, key=lambda t: t.replicas)
    assert ticks[-1].replicas < peak.replicas
    assert_scale_down_rate(ticks, pods=1, period=4.0)

    status = read_status(custom_objects, namespace, "web")
    assert condition(status, "Ready")["status"] == "True"
    assert status["forecast"]["model"]
    assert status["lastScaleTime"]
    reasons = {e.reason for e in events_for(core_v1, namespace, "web")}
    assert "Scaled" in reasons
    described = kubectl(local_cluster, "describe", "psc", "web", "-n", namespace)
    for part in ("Conditions:", "Decision:", "Backtest Errors:", "Scaled", "Deployment/web 2 ->"):
        assert part in described, part
    # Prometheus saw the same story: the load it recorded, and the replicas the operator exported.
    seen = instant_query(
        local_cluster.prometheus_url,
        f'max_over_time(predictive_scaler_replicas{{namespace="{namespace}",kind="desired"}}[5m])',
    )
    assert seen
    assert seen[0].value == peak.replicas
    assert_scaled_before_overload_in_prometheus(local_cluster, namespace, duration + 30)
    load_peak = instant_query(
        local_cluster.prometheus_url,
        f'max_over_time(predictive_scaler_load{{namespace="{namespace}"}}[5m])',
    )
    assert load_peak
    assert math.isclose(load_peak[0].value, PEAK_CORES, rel_tol=0.25)


def assert_scale_down_rate(ticks: list[Tick], *, pods: int, period: float) -> None:
    for i, earlier in enumerate(ticks):
        for later in ticks[i + 1 :]:
            if later.seconds - earlier.seconds >= period:
                break
            assert earlier.replicas - later.replicas <= pods, (earlier, later)


def _first_above(series: list[dict[str, Any]], threshold: float) -> float:
    points = sorted((float(t), float(v)) for item in series for t, v in item["values"])
    return next(t for t, v in points if v > threshold)


def assert_scaled_before_overload_in_prometheus(
    cluster: local.LocalCluster, namespace: str, seconds: float
) -> None:
    """From Prometheus's own timestamps: replicas rose before the load outgrew the first two."""
    prometheus = PrometheusConnect(url=cluster.prometheus_url)
    end = datetime.datetime.now(datetime.UTC)
    start = end - datetime.timedelta(seconds=seconds)
    current = prometheus.custom_query_range(
        f'predictive_scaler_replicas{{namespace="{namespace}",kind="current"}}', start, end, "1s"
    )
    load = prometheus.custom_query_range(
        f'sum(rate(container_cpu_usage_seconds_total{{namespace="{namespace}"}}[6s]))',
        start,
        end,
        "1s",
    )
    assert _first_above(current, 2) < _first_above(load, 2 * CAPACITY)


def create_budgeted(
    apps_v1: client.AppsV1Api,
    custom_objects: client.CustomObjectsApi,
    namespace: str,
    name: str,
    replicas: int,
    *,
    max_replicas: int,
) -> None:
    """A Deployment of ``replicas`` one-core pods, scaled within a 5 % overload budget."""
    create_deployment(apps_v1, namespace, name, replicas, cpu_request=str(CAPACITY))
    body = scaler(
        name,
        name,
        metric={"resource": "cpu", "capacityPerReplica": str(CAPACITY)},
        max_replicas=max_replicas,
    )
    body["spec"]["scaling"]["overloadBudget"] = "5%"
    custom_objects.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, body)


def test_an_overload_budget_counts_overloads_against_ready_pods_and_raises_the_quantile(
    operator: OperatorProcess,
    local_cluster: local.LocalCluster,
    core_v1: client.CoreV1Api,
    apps_v1: client.AppsV1Api,
    custom_objects: client.CustomObjectsApi,
    namespace: str,
) -> None:
    # Two replicas of one core each under 3.5 cores of load, and maxReplicas 2:
    # every sample is an overload the scaler cannot prevent.
    create_budgeted(apps_v1, custom_objects, namespace, "capped", 2, max_replicas=2)
    with LoadDriver(core_v1, apps_v1, namespace, "capped", lambda seconds: 3.5):

        def overloads_counted() -> bool:
            overload = read_status(custom_objects, namespace, "capped").get("overload", {})
            return bool(overload.get("samples", 0) >= 5 and overload.get("realised") == "100%")

        wait_for(overloads_counted, timeout=WARMUP + 60, what="five overloaded samples counted")
    overload = read_status(custom_objects, namespace, "capped")["overload"]
    assert overload["budget"] == "5%"
    # It starts at the 95 % quantile and every overload raises it.
    assert overload["quantile"] > 0.95
    assert overload["summary"] == "100% of 5%"
    # Every sample overloads, but because of maxReplicas: the highest quantile
    # would have provisioned the 3.5 cores, so none is beyond its ceiling.
    assert overload["overloaded"] == overload["samples"]
    assert overload["beyondCeiling"] == 0
    row = kubectl(local_cluster, "get", "psc", "capped", "-n", namespace).splitlines()[1]
    assert "100% of 5%" in row
    labels = f'namespace="{namespace}",name="capped"'
    expected: dict[str, Callable[[float], bool]] = {
        "predictive_scaler_overload_budget_ratio": lambda v: v == 0.05,
        "predictive_scaler_overload_realised_ratio": lambda v: v == 1.0,
        "predictive_scaler_overload_beyond_ceiling_ratio": lambda v: v == 0.0,
        "predictive_scaler_forecast_quantile": lambda v: 0.95 < v < 1.0,
    }
    for metric, check in expected.items():

        def exported(metric: str = metric, check: Callable[[float], bool] = check) -> bool:
            query = f"{metric}{{{labels}}}"
            return any(check(s.value) for s in instant_query(local_cluster.prometheus_url, query))

        wait_for(exported, timeout=30, what=f"{metric} in Prometheus")


def test_a_load_step_no_forecast_saw_counts_beyond_the_ceiling(
    operator: OperatorProcess,
    core_v1: client.CoreV1Api,
    apps_v1: client.AppsV1Api,
    custom_objects: client.CustomObjectsApi,
    namespace: str,
) -> None:
    # Half a core until the forecast has settled on it, then six: the decisions
    # that sized the first steps after the jump provisioned for half a core
    # plus five spreads, one or two replicas, so those steps' overloads were
    # beyond what any budget would have bought.
    create_budgeted(apps_v1, custom_objects, namespace, "stepped", 1, max_replicas=10)
    jumped = threading.Event()
    with LoadDriver(
        core_v1, apps_v1, namespace, "stepped", lambda seconds: 6.0 if jumped.is_set() else 0.5
    ):

        def settled() -> bool:
            status = read_status(custom_objects, namespace, "stepped")
            # A forecast made, and 20 samples (40 s) of the steady load counted.
            return bool(
                status.get("forecast", {}).get("model")
                and status.get("overload", {}).get("samples", 0) >= 20
            )

        wait_for(settled, timeout=WARMUP + 120, what="a forecast on 40 s of steady load")
        before = read_status(custom_objects, namespace, "stepped")["overload"]
        jumped.set()

        def counted_beyond() -> bool:
            overload = read_status(custom_objects, namespace, "stepped")["overload"]
            return int(overload.get("beyondCeiling", 0)) > int(before.get("beyondCeiling", 0))

        # The sync period and the lead time are seconds; the rate() window a few more.
        wait_for(counted_beyond, timeout=60, what="an overload beyond the ceiling counted")
    overload = read_status(custom_objects, namespace, "stepped")["overload"]
    assert 0 < overload["beyondCeiling"] <= overload["overloaded"] <= overload["samples"]
