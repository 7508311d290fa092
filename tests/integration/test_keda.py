"""KEDA in the local control plane: a ScaledObject's Prometheus trigger scales a Deployment.

The operator reads the trigger's query from Prometheus and serves it over
mutual-TLS gRPC; the adapter serves it as external.metrics.k8s.io through the
aggregator; the HPA controller, as its own service account, reads it from
there and scales the Deployment KEDA's HPA names.
"""

from __future__ import annotations

import math
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

import predictive_scaler_dev.localcluster as local
from predictive_scaler.operator.resource import quantity
from predictive_scaler_dev.localcluster.keda import APISERVICE_NAME
from predictive_scaler_dev.localcluster.kube import running_pods, set_pod_usage
from tests.fixtures.cluster import assert_apiservice_trusted_and_available, deployment, wait_for

APP = "keda-scaled"
THRESHOLD = 0.7  # cores per replica
USAGE = (1.4, 1.4)  # cores on each of two pods: 2.8 in all, four replicas' worth
# KEDA checks its trigger once before calling the ScaledObject Ready.
READY_DEADLINE = 120.0
# From the usage to the replicas: kwok's counters, a 2 s scrape, an 8 s rate
# window filled twice over, a 1 s HPA sync, and room for a busy machine.
SCALE_DEADLINE = 120.0


def _scaled_object(namespace: str, prometheus_url: str) -> dict[str, Any]:
    query = (
        f'sum(rate(container_cpu_usage_seconds_total{{namespace="{namespace}",'
        f'pod=~"{APP}-.*",container!=""}}[8s]))'
    )
    return {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": APP},
        "spec": {
            "scaleTargetRef": {"name": APP},
            "minReplicaCount": 2,
            "maxReplicaCount": 10,
            "pollingInterval": 1,
            "triggers": [
                {
                    "type": "prometheus",
                    "metadata": {
                        "serverAddress": prometheus_url,
                        "query": query,
                        "threshold": f"{THRESHOLD}",
                    },
                }
            ],
        },
    }


def test_external_metrics_api_is_registered_with_the_cluster_ca_and_available(
    kube_api: client.ApiClient,
) -> None:
    assert_apiservice_trusted_and_available(kube_api, APISERVICE_NAME)


def test_a_scaled_object_scales_its_deployment_from_a_prometheus_query(
    local_cluster: local.LocalCluster,
    kube_api: client.ApiClient,
    core_v1: client.CoreV1Api,
    apps_v1: client.AppsV1Api,
    namespace: str,
) -> None:
    apps_v1.create_namespaced_deployment(
        namespace,
        deployment(APP, 2, cpu_request="1000m"),  # type: ignore[arg-type]
    )
    wait_for(lambda: len(running_pods(core_v1, namespace, APP)) == 2, what="2 pods Running")
    for pod, cores in zip(running_pods(core_v1, namespace, APP), USAGE, strict=True):
        assert pod.metadata is not None
        set_pod_usage(core_v1, namespace, str(pod.metadata.name), cpu=f"{round(cores * 1000)}m")

    custom = client.CustomObjectsApi(kube_api)
    body = _scaled_object(namespace, local_cluster.prometheus_url)
    custom.create_namespaced_custom_object("keda.sh", "v1alpha1", namespace, "scaledobjects", body)

    def ready() -> bool:
        found: Any = custom.get_namespaced_custom_object(
            "keda.sh", "v1alpha1", namespace, "scaledobjects", APP
        )
        conditions = (found.get("status") or {}).get("conditions") or []
        return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)

    wait_for(ready, timeout=READY_DEADLINE, what=f"ScaledObject/{APP} Ready")
    hpa = client.AutoscalingV2Api(kube_api).read_namespaced_horizontal_pod_autoscaler(
        f"keda-hpa-{APP}", namespace
    )
    assert hpa.spec is not None
    assert hpa.spec.metrics
    external = hpa.spec.metrics[0].external
    assert external is not None, "KEDA's HPA reads an external metric"

    def metric_value() -> float | None:
        # What the HPA controller reads, through the aggregator and the adapter.
        try:
            found: Any = custom.list_namespaced_custom_object(
                "external.metrics.k8s.io",
                "v1beta1",
                namespace,
                external.metric.name,
                label_selector=f"scaledobject.keda.sh/name={APP}",
            )
        except ApiException:
            return None
        items = found.get("items") or []
        return quantity(items[0]["value"]) if items else None

    total = sum(USAGE)
    wait_for(
        lambda: (value := metric_value()) is not None and math.isclose(value, total, rel_tol=0.1),
        timeout=SCALE_DEADLINE,
        what=f"external.metrics.k8s.io to serve the query's {total} cores",
    )

    def replicas() -> int:
        scale = apps_v1.read_namespaced_deployment_scale(APP, namespace)
        return int(scale.spec.replicas) if scale.spec and scale.spec.replicas else 0

    wanted = math.ceil(total / THRESHOLD - 1e-9)
    wait_for(lambda: replicas() == wanted, timeout=SCALE_DEADLINE, what=f"{wanted} replicas")
