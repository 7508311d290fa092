"""The real autoscalers the demo runs beside the operator, each on its own copy of the Deployment.

The HPA controller of kube-controller-manager, reading metrics-server, and
KEDA, whose operator turns a ScaledObject into an HPA of its own that reads an
external metric: the Prometheus query, answered by KEDA's metrics adapter.
"""

from __future__ import annotations

from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from predictive_scaler_dev.demo.scenario import HPA_WORKLOAD, KEDA_WORKLOAD, NAMESPACE, Scenario
from predictive_scaler_dev.localcluster.waiting import wait_until

KEDA_GROUP, KEDA_VERSION, SCALED_OBJECTS = "keda.sh", "v1alpha1", "scaledobjects"
# KEDA checks the trigger once and creates its HPA; a busy machine may take a while.
KEDA_READY_SECONDS = 120.0


def apply_hpa(api: client.ApiClient, scenario: Scenario) -> str:
    client.AutoscalingV2Api(api).create_namespaced_horizontal_pod_autoscaler(
        NAMESPACE,
        scenario.hpa(),  # type: ignore[arg-type]
    )
    return (
        f"HorizontalPodAutoscaler/{HPA_WORKLOAD}: the real HPA controller, CPU at the same "
        "target, reading metrics-server"
    )


def apply_scaled_object(
    api: client.ApiClient, scenario: Scenario, prometheus_url: str, scrape_interval: float
) -> str:
    """Create KEDA's ScaledObject and wait until KEDA calls it Ready (its trigger answered)."""
    custom = client.CustomObjectsApi(api)
    body = scenario.scaled_object(prometheus_url, scrape_interval)
    custom.create_namespaced_custom_object(
        KEDA_GROUP, KEDA_VERSION, NAMESPACE, SCALED_OBJECTS, body
    )
    wait_until(
        lambda: _ready(custom),
        timeout=KEDA_READY_SECONDS,
        what=f"KEDA's ScaledObject/{KEDA_WORKLOAD} Ready (see the local cluster's keda logs)",
    )
    return (
        f"ScaledObject/{KEDA_WORKLOAD}: KEDA's Prometheus scaler on the operator's CPU query, "
        "at the same target"
    )


def _ready(custom: client.CustomObjectsApi) -> bool:
    try:
        found: Any = custom.get_namespaced_custom_object(
            KEDA_GROUP, KEDA_VERSION, NAMESPACE, SCALED_OBJECTS, KEDA_WORKLOAD
        )
    except ApiException:
        return False
    conditions = (found.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
