"""What the operator does when things go wrong: it says so, holds replicas, and recovers."""

from __future__ import annotations

import datetime
from contextlib import ExitStack
from typing import Any

from kubernetes import client

import predictive_scaler_dev.localcluster as local
from predictive_scaler.operator.resource import GROUP, PLURAL, VERSION
from predictive_scaler_dev.demo.load import LoadDriver
from predictive_scaler_dev.demo.process import OperatorProcess
from tests.fixtures.cluster import create_deployment, wait_for, wait_for_read
from tests.fixtures.operator import (
    condition,
    events_for,
    hold_for,
    read_status,
    replicas,
    replicas_stay,
    scaler,
    wait_condition,
)

CPU = {"resource": "cpu", "targetPerReplica": "500m"}


def fast_scaler(name: str, target: str, mode: str = "Auto") -> dict[str, Any]:
    """2 s steps over 20 s of history: decides about 12 s after its load appears."""
    body = scaler(name, target, metric=CPU, min_replicas=2, mode=mode)
    body["spec"]["forecast"]["history"] = "20s"
    return body


def create(custom_objects: client.CustomObjectsApi, namespace: str, body: dict[str, Any]) -> None:
    custom_objects.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, body)


def scaled_up(apps: client.AppsV1Api, namespace: str, name: str = "web") -> int:
    """Wait for the first scale-up from 2 and return the replicas it set.

    The exact count depends on how wide the first forecast interval is (the
    history still holds the warm-up of the rate window), so tests take it as found.
    """
    return wait_for_read(
        lambda: replicas(apps, namespace, name),
        lambda found: found > 2,
        timeout=90,
        what=f"{name} to scale up",
    )


def test_a_missing_target_is_reported_and_nothing_else_is_touched(
    operator: OperatorProcess,
    custom_objects: client.CustomObjectsApi,
    core_v1: client.CoreV1Api,
    namespace: str,
) -> None:
    create(custom_objects, namespace, scaler("ghost", "no-such-deployment", metric=CPU))
    ready = wait_condition(custom_objects, namespace, "ghost", "Ready", "False", "TargetNotFound")
    assert "Deployment/no-such-deployment not found" in ready["message"]
    wait_for(
        lambda: "TargetNotFound" in {e.reason for e in events_for(core_v1, namespace, "ghost")},
        what="a TargetNotFound Event",
    )
    assert operator.alive()


def test_a_query_returning_several_series_holds_replicas(
    operator: OperatorProcess,
    custom_objects: client.CustomObjectsApi,
    apps_v1: client.AppsV1Api,
    steady_load: LoadDriver,
    namespace: str,
) -> None:
    query = f'rate(container_cpu_usage_seconds_total{{namespace="{namespace}"}}[10s])'
    create(
        custom_objects,
        namespace,
        scaler("several", "web", metric={"query": query, "targetPerReplica": "100m"}),
    )
    available = wait_condition(
        custom_objects, namespace, "several", "MetricsAvailable", "False", "MultipleSeries"
    )
    assert "returns 2 series" in available["message"]
    hold_for(6, lambda: replicas_stay(apps_v1, namespace, "web", 2))


def test_prometheus_stopped_mid_run_holds_replicas_and_recovers_by_itself(
    operator: OperatorProcess,
    local_cluster: local.LocalCluster,
    custom_objects: client.CustomObjectsApi,
    apps_v1: client.AppsV1Api,
    core_v1: client.CoreV1Api,
    steady_load: LoadDriver,
    namespace: str,
) -> None:
    create(custom_objects, namespace, fast_scaler("web", "web"))
    wait_condition(custom_objects, namespace, "web", "Ready", "True", timeout=90)
    scaled_up(apps_v1, namespace)
    try:
        local.stop_component(local_cluster.run_dir, "prometheus")
        down = wait_condition(
            custom_objects, namespace, "web", "MetricsAvailable", "False", "Unreachable"
        )
        assert "unreachable" in down["message"]
        # Read once an evaluation has found Prometheus gone: one that read it just before
        # the stop may still have scaled, and one that cannot read it never does.
        held = replicas(apps_v1, namespace, "web")
        hold_for(6, lambda: replicas_stay(apps_v1, namespace, "web", held))
        status = read_status(custom_objects, namespace, "web")
        assert condition(status, "ScalingActive")["status"] == "False"
        assert status["decision"].startswith(f"holding {held} replicas")
    finally:
        local.restart_component(local_cluster.run_dir, "prometheus")
    wait_condition(custom_objects, namespace, "web", "MetricsAvailable", "True", timeout=90)
    wait_condition(custom_objects, namespace, "web", "Ready", "True")
    warnings = {e.reason for e in events_for(core_v1, namespace, "web") if e.type == "Warning"}
    assert "Unreachable" in warnings
    assert replicas(apps_v1, namespace, "web") >= held


def test_a_target_managed_by_an_hpa_or_an_older_scaler_is_refused_by_name(
    operator: OperatorProcess,
    kube_api: client.ApiClient,
    custom_objects: client.CustomObjectsApi,
    apps_v1: client.AppsV1Api,
    steady_load: LoadDriver,
    namespace: str,
) -> None:
    hpa = {
        "metadata": {"name": "web-hpa"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 2,
            "maxReplicas": 3,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "target": {"type": "Utilization", "averageUtilization": 70},
                    },
                }
            ],
        },
    }
    autoscaling = client.AutoscalingV2Api(kube_api)
    autoscaling.create_namespaced_horizontal_pod_autoscaler(namespace, hpa)  # type: ignore[arg-type]
    create(custom_objects, namespace, fast_scaler("web", "web"))
    ready = wait_condition(
        custom_objects, namespace, "web", "Ready", "False", "ConflictingAutoscaler"
    )
    assert "HorizontalPodAutoscaler/web-hpa already manages Deployment/web" in ready["message"]
    hold_for(4, lambda: replicas_stay(apps_v1, namespace, "web", 2))

    autoscaling.delete_namespaced_horizontal_pod_autoscaler("web-hpa", namespace)
    wait_condition(custom_objects, namespace, "web", "Ready", "True", timeout=90)
    create(custom_objects, namespace, fast_scaler("web-too", "web"))
    second = wait_condition(
        custom_objects, namespace, "web-too", "Ready", "False", "ConflictingAutoscaler"
    )
    assert "PredictiveScaler/web already manages Deployment/web" in second["message"]


# KEDA makes its HPA when it first reconciles the ScaledObject; a busy machine
# may take a while to start that, as the KEDA integration test allows.
KEDA_HPA_SECONDS = 120.0


def test_a_target_keda_scales_is_refused_naming_the_scaled_object_users_wrote(
    operator: OperatorProcess,
    local_cluster: local.LocalCluster,
    custom_objects: client.CustomObjectsApi,
    apps_v1: client.AppsV1Api,
    steady_load: LoadDriver,
    namespace: str,
) -> None:
    scaled_object = {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": "web-keda"},
        "spec": {
            "scaleTargetRef": {"name": "web"},
            "minReplicaCount": 2,
            "maxReplicaCount": 3,
            # Two replicas' worth whatever the load: KEDA keeps the count it finds.
            "triggers": [
                {
                    "type": "prometheus",
                    "metadata": {
                        "serverAddress": local_cluster.prometheus_url,
                        "query": "vector(1.4)",
                        "threshold": "0.7",
                    },
                }
            ],
        },
    }
    custom_objects.create_namespaced_custom_object(
        "keda.sh", "v1alpha1", namespace, "scaledobjects", scaled_object
    )
    create(custom_objects, namespace, fast_scaler("web", "web"))
    ready = wait_condition(
        custom_objects,
        namespace,
        "web",
        "Ready",
        "False",
        "ConflictingAutoscaler",
        timeout=KEDA_HPA_SECONDS,
    )
    assert (
        "KEDA's ScaledObject/web-keda (through HorizontalPodAutoscaler/keda-hpa-web-keda) "
        "already manages Deployment/web"
    ) in ready["message"]
    status = read_status(custom_objects, namespace, "web")
    assert condition(status, "ScalingActive")["status"] == "False"
    assert replicas(apps_v1, namespace, "web") == 2


def test_dry_run_reports_the_decision_and_changes_nothing(
    operator: OperatorProcess,
    custom_objects: client.CustomObjectsApi,
    core_v1: client.CoreV1Api,
    apps_v1: client.AppsV1Api,
    namespace: str,
) -> None:
    drivers = []
    for name in ("live", "dry"):
        create_deployment(apps_v1, namespace, name, 2, cpu_request="1")
        drivers.append(LoadDriver(core_v1, apps_v1, namespace, name, lambda _: 2.6))
    with ExitStack() as stack:
        for driver in drivers:
            stack.enter_context(driver)
        # "shadow" watches the "live" Deployment in DryRun first; "live" (Auto) comes
        # once the shadow has decided, so both decide from the same 2 replicas with
        # the same history and decision code.
        create(custom_objects, namespace, fast_scaler("shadow", "live", mode="DryRun"))
        create(custom_objects, namespace, fast_scaler("dry", "dry", mode="DryRun"))
        shadow: list[int] = []

        def shadow_wants_more() -> bool:
            desired = int(
                read_status(custom_objects, namespace, "shadow").get("desiredReplicas", 0)
            )
            if desired > 2 and not shadow:
                shadow.append(desired)
            return bool(shadow)

        wait_for(shadow_wants_more, timeout=90, what="the DryRun shadow to want more replicas")
        assert replicas(apps_v1, namespace, "live") == 2, "DryRun changed its Deployment"
        create(custom_objects, namespace, fast_scaler("live", "live"))

        def dry_wants_more() -> bool:
            assert replicas(apps_v1, namespace, "dry") == 2, "DryRun changed its Deployment"
            return int(read_status(custom_objects, namespace, "dry").get("desiredReplicas", 0)) > 2

        wait_for(dry_wants_more, timeout=60, what="the DryRun object to want more replicas")
        live = scaled_up(apps_v1, namespace, "live")
        hold_for(6, lambda: replicas_stay(apps_v1, namespace, "dry", 2))
    # A few seconds apart, the two may see a sample more or less.
    assert abs(shadow[0] - live) <= 1, (shadow, live)
    status = read_status(custom_objects, namespace, "dry")
    assert condition(status, "ScalingActive")["reason"] == "DryRun"
    assert "forecast" in status["decision"]
    assert "Scaled" not in {e.reason for e in events_for(core_v1, namespace, "dry")}


def test_killing_and_restarting_the_operator_loses_no_state_and_scales_nothing(
    operator: OperatorProcess,
    custom_objects: client.CustomObjectsApi,
    core_v1: client.CoreV1Api,
    apps_v1: client.AppsV1Api,
    steady_load: LoadDriver,
    namespace: str,
) -> None:
    create(custom_objects, namespace, fast_scaler("web", "web"))
    scaled_up(apps_v1, namespace)
    wait_condition(custom_objects, namespace, "web", "Ready", "True")

    # Right after the first scale-up the history still holds the rate window's
    # warm-up, and a later decision may legitimately add a replica; kill only
    # once the steady load has given a settled decision.
    def settled() -> bool:
        last = read_status(custom_objects, namespace, "web")["lastScaleTime"]
        scaled_at = datetime.datetime.fromisoformat(str(last))
        return datetime.datetime.now(datetime.UTC) - scaled_at > datetime.timedelta(seconds=12)

    wait_for(settled, timeout=90, what="12 s without a scale under steady load")
    held = replicas(apps_v1, namespace, "web")
    before = read_status(custom_objects, namespace, "web")
    scaled_before = sum(e.reason == "Scaled" for e in events_for(core_v1, namespace, "web"))

    operator.kill()
    operator.start()

    def evaluated_again() -> bool:
        now = read_status(custom_objects, namespace, "web")
        return str(now.get("lastEvaluationTime", "")) > str(before["lastEvaluationTime"])

    wait_for(evaluated_again, timeout=60, what="the restarted operator to evaluate")
    hold_for(8, lambda: replicas_stay(apps_v1, namespace, "web", held))
    after = read_status(custom_objects, namespace, "web")
    assert after["lastScaleTime"] == before["lastScaleTime"]
    assert '"scale_up_events":[{' in after["scalingState"]
    assert before["scalingState"].split('"scale_up_events":')[1][:40] in after["scalingState"]
    scaled_after = sum(e.reason == "Scaled" for e in events_for(core_v1, namespace, "web"))
    assert scaled_after == scaled_before
