"""The chart installs, and its ServiceAccount can do exactly what the operator needs.

The operator runs locally with a token of the chart's ServiceAccount (a real
identity, not the admin's), goes through a scale action and a rebalancing
eviction, and a verb the chart does not grant is refused.
"""

from __future__ import annotations

import subprocess
import uuid
from contextlib import ExitStack
from pathlib import Path

from kubernetes import client

import predictive_scaler_dev.localcluster as local
from predictive_scaler.operator.resource import GROUP, PLURAL, VERSION
from predictive_scaler_dev.demo.load import LoadDriver
from predictive_scaler_dev.localcluster import NodeShape
from predictive_scaler_dev.localcluster.kube import running_pods
from tests.fixtures.chart import service_account_kubeconfig
from tests.fixtures.cluster import (
    KwokNodes,
    create_deployment,
    pinned_deployment,
    wait_for,
)
from tests.fixtures.operator import StartOperator, kubectl, scaler


def test_the_charts_service_account_is_enough_for_a_scale_and_an_eviction_and_no_more(
    installed: str,
    start_operator: StartOperator,
    local_cluster: local.LocalCluster,
    kwok_nodes: KwokNodes,
    core_v1: client.CoreV1Api,
    apps_v1: client.AppsV1Api,
    custom_objects: client.CustomObjectsApi,
    namespace: str,
    tmp_path: Path,
) -> None:
    for kind in ("deployment", "serviceaccount", "service"):
        kubectl(
            local_cluster,
            "get",
            kind,
            "-n",
            namespace,
            installed if kind != "service" else f"{installed}-metrics",
        )
    kubectl(local_cluster, "get", "clusterrole", installed)
    kubectl(local_cluster, "get", "clusterrolebinding", installed)
    identity = service_account_kubeconfig(
        local_cluster, namespace, installed, tmp_path / "sa.kubeconfig"
    )

    # A scale action: 2 replicas carrying 1.7 cores at 500m each must grow.
    create_deployment(apps_v1, namespace, "web", 2, cpu_request="1")
    # An eviction: a hot node with an opted-in workload and a cool node to take it.
    pool = f"pool-{uuid.uuid4().hex[:6]}"
    shape = NodeShape(cpu="8", memory="32Gi", labels={"pool": pool})
    hot = kwok_nodes.create(shape)
    apps_v1.create_namespaced_deployment(namespace, pinned_deployment("batch", 4, pool))  # type: ignore[arg-type]
    wait_for(lambda: len(running_pods(core_v1, namespace, "batch")) == 4, what="batch Running")
    cool = kwok_nodes.create(shape)
    with ExitStack() as stack:
        for driver in (
            LoadDriver(core_v1, apps_v1, namespace, "web", lambda _: 1.7),
            LoadDriver(core_v1, apps_v1, namespace, "batch", lambda _: 4.0),
        ):
            stack.enter_context(driver)
        web = scaler(
            "web", "web", metric={"resource": "cpu", "targetPerReplica": "500m"}, min_replicas=2
        )
        web["spec"]["forecast"]["history"] = "20s"
        batch = scaler(
            "batch", "batch", metric={"resource": "cpu", "targetPerReplica": "1"}, mode="DryRun"
        )
        batch["spec"]["rebalance"] = {"enabled": True}
        for body in (web, batch):
            custom_objects.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, body)
        operator = start_operator(
            {
                "KUBECONFIG": str(identity),
                "PREDICTIVE_SCALER_REBALANCE_MODE": "Auto",
                "PREDICTIVE_SCALER_REBALANCE_INTERVAL": "3s",
                "PREDICTIVE_SCALER_REBALANCE_WEIGHTS": "cpu=1",
                "PREDICTIVE_SCALER_REBALANCE_NODES": f"pool={pool}",
            }
        )

        def scaled() -> bool:
            scale = apps_v1.read_namespaced_deployment_scale("web", namespace)
            return bool(scale.spec and scale.spec.replicas and scale.spec.replicas > 2)

        wait_for(scaled, timeout=90, what=f"a scale-up by the ServiceAccount ({operator.log})")

        def evicted() -> bool:
            reasons = {e.reason for e in core_v1.list_namespaced_event(namespace).items}
            return "Evicted" in reasons

        wait_for(evicted, timeout=90, what=f"an eviction by the ServiceAccount ({operator.log})")

        def replaced_on_cool() -> bool:
            pods = running_pods(core_v1, namespace, "batch")
            return bool({p.spec.node_name for p in pods if p.spec} & set(cool))

        # The replacement is made, scheduled and started after the eviction's Event.
        wait_for(replaced_on_cool, what="the evicted pod's replacement Running on the cool node")
    assert "Forbidden" not in operator.log_tail(200)
    assert hot

    # What the chart does not grant stays refused for the same identity.
    victim = running_pods(core_v1, namespace, "web")[0].metadata
    assert victim is not None
    as_operator = [str(local_cluster.binaries.kubectl), f"--kubeconfig={identity}"]
    refused = subprocess.run(
        [*as_operator, "delete", "pod", str(victim.name), "-n", namespace],
        capture_output=True,
        text=True,
        check=False,
    )
    assert refused.returncode != 0
    assert "forbidden" in refused.stderr.lower()
