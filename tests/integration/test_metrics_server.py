"""metrics-server in the local control plane: the metrics.k8s.io API, as `kubectl top` reads it.

kwok integrates each pod's annotated usage into kubelet-style counters;
metrics-server reads them at every node's status port and path, and the
aggregator serves them under metrics.k8s.io with the cluster's certificates.
What `kubectl top` prints must match the annotated usage within 10 %.
"""

from __future__ import annotations

import math
import os
import subprocess

from kubernetes import client

import predictive_scaler_dev.localcluster as local
from predictive_scaler.operator.resource import quantity
from predictive_scaler_dev.localcluster.configs import METRICS_SERVER_RESOLUTION
from predictive_scaler_dev.localcluster.kube import NodeShape, running_pods, set_pod_usage
from predictive_scaler_dev.localcluster.metrics_server import APISERVICE_NAME
from tests.fixtures.cluster import (
    KwokNodes,
    assert_apiservice_trusted_and_available,
    deployment,
    wait_for,
)

APP = "topped"
RESOLUTION_SECONDS = float(METRICS_SERVER_RESOLUTION.removesuffix("s"))
# A new rate needs two reads after the usage changes; the API's cache and
# kubectl add little. Six resolutions leave room for a busy machine.
TOP_DEADLINE = 6 * RESOLUTION_SECONDS


def _top(cluster: local.LocalCluster, *arguments: str) -> list[list[str]]:
    """`kubectl top ...` as rows of columns; no rows while metrics are not there yet."""
    completed = subprocess.run(
        [str(cluster.binaries.kubectl), "top", *arguments, "--no-headers"],
        env={**os.environ, "KUBECONFIG": str(cluster.kubeconfig)},
        capture_output=True,
        text=True,
        check=False,
    )
    if completed.returncode != 0:
        return []
    return [line.split() for line in completed.stdout.splitlines() if line.strip()]


def _close(printed: str, expected: float) -> bool:
    return math.isclose(quantity(printed), expected, rel_tol=0.1)


def test_metrics_api_is_registered_with_the_cluster_ca_and_available(
    kube_api: client.ApiClient,
) -> None:
    assert_apiservice_trusted_and_available(kube_api, APISERVICE_NAME)


def test_kubectl_top_pods_and_nodes_match_the_annotated_usage(
    local_cluster: local.LocalCluster,
    core_v1: client.CoreV1Api,
    apps_v1: client.AppsV1Api,
    namespace: str,
    kwok_nodes: KwokNodes,
) -> None:
    (node,) = kwok_nodes.create(NodeShape(cpu="8", memory="16Gi", labels={"topped": "only"}))
    spec = deployment(APP, 2)
    spec["spec"]["template"]["spec"]["nodeSelector"] = {"topped": "only"}
    apps_v1.create_namespaced_deployment(namespace, spec)  # type: ignore[arg-type]
    wait_for(lambda: len(running_pods(core_v1, namespace, APP)) == 2, what="2 pods Running")
    pods = sorted(str(p.metadata.name) for p in running_pods(core_v1, namespace, APP) if p.metadata)
    usage = {pods[0]: (0.3, 200 * 2**20), pods[1]: (1.2, 600 * 2**20)}
    for pod, (cores, memory) in usage.items():
        set_pod_usage(core_v1, namespace, pod, cpu=f"{round(cores * 1000)}m", memory=str(memory))

    def pods_match() -> bool:
        rows = {row[0]: row[1:] for row in _top(local_cluster, "pods", "-n", namespace)}
        return all(
            pod in rows and _close(rows[pod][0], cores) and _close(rows[pod][1], memory)
            for pod, (cores, memory) in usage.items()
        )

    wait_for(pods_match, timeout=TOP_DEADLINE, what="`kubectl top pods` shows the annotated usage")

    total_cpu = sum(cores for cores, _ in usage.values())
    total_memory = sum(memory for _, memory in usage.values())

    def node_matches() -> bool:
        rows = _top(local_cluster, "node", node)
        # NAME CPU(cores) CPU(%) MEMORY(bytes) MEMORY(%)
        return len(rows) == 1 and _close(rows[0][1], total_cpu) and _close(rows[0][3], total_memory)

    wait_for(node_matches, timeout=TOP_DEADLINE, what=f"`kubectl top node {node}` shows the sum")
