"""Smoke tests of the local control plane itself: real scheduler, controllers, kwok, Prometheus."""

from __future__ import annotations

import math
import uuid

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException
from prometheus_client import CollectorRegistry, Gauge, start_http_server

import predictive_scaler_dev.localcluster as local
from predictive_scaler.promclient import Sample
from predictive_scaler_dev.localcluster.kube import NodeShape, running_pods, set_pod_usage
from tests.fixtures.cluster import (
    KwokNodes,
    PrometheusQuery,
    create_deployment,
    deployment,
    wait_for,
)

APP = "smoke"


def test_scheduler_places_deployment_pods_on_kwok_nodes_and_scale_subresource_resizes(
    core_v1: client.CoreV1Api, apps_v1: client.AppsV1Api, namespace: str
) -> None:
    create_deployment(apps_v1, namespace, APP, 3)
    wait_for(lambda: len(running_pods(core_v1, namespace, APP)) == 3, what="3 pods Running")

    kwok_nodes = {
        n.metadata.name
        for n in core_v1.list_node().items
        if n.metadata is not None and (n.metadata.annotations or {}).get("kwok.x-k8s.io/node")
    }
    for pod in running_pods(core_v1, namespace, APP):
        assert pod.spec is not None
        assert pod.spec.node_name in kwok_nodes
    scheduled = core_v1.list_namespaced_event(namespace, field_selector="reason=Scheduled").items
    assert {e.source.component for e in scheduled if e.source} | {
        e.reporting_component for e in scheduled
    } >= {"default-scheduler"}

    apps_v1.patch_namespaced_deployment_scale(APP, namespace, {"spec": {"replicas": 5}})
    scale = apps_v1.read_namespaced_deployment_scale(APP, namespace)
    assert scale.spec is not None
    assert scale.spec.replicas == 5
    wait_for(lambda: len(running_pods(core_v1, namespace, APP)) == 5, what="5 pods Running")


def test_annotated_pod_cpu_appears_in_prometheus_for_exactly_those_pods(
    core_v1: client.CoreV1Api,
    apps_v1: client.AppsV1Api,
    namespace: str,
    prometheus_query: PrometheusQuery,
) -> None:
    create_deployment(apps_v1, namespace, APP, 3)
    wait_for(lambda: len(running_pods(core_v1, namespace, APP)) == 3, what="3 pods Running")
    pods = sorted(str(p.metadata.name) for p in running_pods(core_v1, namespace, APP) if p.metadata)
    usage = {pods[0]: 0.25, pods[1]: 1.5}
    for pod, cores in usage.items():
        set_pod_usage(core_v1, namespace, pod, cpu=f"{round(cores * 1000)}m", memory="200Mi")

    promql = f'rate(container_cpu_usage_seconds_total{{namespace="{namespace}"}}[10s])'

    def annotated_values_reached(samples: list[Sample]) -> bool:
        by_pod = {s.labels["pod"]: s.value for s in samples}
        return all(
            pod in by_pod and math.isclose(by_pod[pod], cores, rel_tol=0.1)
            for pod, cores in usage.items()
        )

    samples = prometheus_query(promql, annotated_values_reached)
    busy = {s.labels["pod"] for s in samples if s.value > 0.1}
    assert busy == set(usage), "only the annotated pods carry the annotated usage"
    assert all(s.labels["container"] == "app" for s in samples)

    memory = prometheus_query(
        f'container_memory_working_set_bytes{{namespace="{namespace}",pod="{pods[0]}"}}',
        lambda found: len(found) == 1 and found[0].value == 200 * 2**20,
    )
    assert memory[0].labels["pod"] == pods[0]


def test_pod_disruption_budget_blocks_eviction_and_without_it_the_pod_is_replaced(
    core_v1: client.CoreV1Api,
    apps_v1: client.AppsV1Api,
    policy_v1: client.PolicyV1Api,
    namespace: str,
) -> None:
    create_deployment(apps_v1, namespace, "guarded", 2)
    create_deployment(apps_v1, namespace, "free", 2)
    pdb = {
        "metadata": {"name": "guarded"},
        "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "guarded"}}},
    }
    policy_v1.create_namespaced_pod_disruption_budget(namespace, pdb)  # type: ignore[arg-type]
    wait_for(lambda: len(running_pods(core_v1, namespace, "guarded")) == 2, what="guarded Running")
    wait_for(lambda: len(running_pods(core_v1, namespace, "free")) == 2, what="free Running")

    def budget_observed() -> bool:
        budget = policy_v1.read_namespaced_pod_disruption_budget("guarded", namespace)
        return budget.status is not None and budget.status.current_healthy == 2

    wait_for(budget_observed, what="disruption controller to observe the budget")

    def evict(pod: str) -> None:
        body = {"metadata": {"name": pod, "namespace": namespace}}
        core_v1.create_namespaced_pod_eviction(pod, namespace, body)  # type: ignore[arg-type]

    guarded = running_pods(core_v1, namespace, "guarded")[0].metadata
    assert guarded is not None
    with pytest.raises(ApiException) as refused:
        evict(str(guarded.name))
    assert refused.value.status == 429
    assert "disruption budget" in str(refused.value.body)

    free = running_pods(core_v1, namespace, "free")[0].metadata
    assert free is not None
    evict(str(free.name))

    def replaced() -> bool:
        names = {p.metadata.name for p in running_pods(core_v1, namespace, "free") if p.metadata}
        return len(names) == 2 and free.name not in names

    wait_for(replaced, what="ReplicaSet to replace the evicted pod")
    assert guarded.name in {
        p.metadata.name for p in running_pods(core_v1, namespace, "guarded") if p.metadata
    }


def test_node_cpu_and_memory_usage_are_queryable_per_node(
    core_v1: client.CoreV1Api,
    apps_v1: client.AppsV1Api,
    namespace: str,
    kwok_nodes: KwokNodes,
    prometheus_query: PrometheusQuery,
) -> None:
    (node,) = kwok_nodes.create(NodeShape(cpu="8", memory="16Gi", labels={"smoke": "only"}))
    spec = deployment(APP, 1)
    spec["spec"]["template"]["spec"]["nodeSelector"] = {"smoke": "only"}
    apps_v1.create_namespaced_deployment(namespace, spec)  # type: ignore[arg-type]
    wait_for(lambda: len(running_pods(core_v1, namespace, APP)) == 1, what="pod Running")
    (pod,) = running_pods(core_v1, namespace, APP)
    assert pod.metadata is not None
    assert pod.spec is not None
    assert pod.spec.node_name == node
    set_pod_usage(core_v1, namespace, str(pod.metadata.name), cpu="3", memory="2Gi")

    cpu = prometheus_query(
        f'rate(node_cpu_usage_seconds_total{{node="{node}"}}[10s])',
        lambda found: len(found) == 1 and math.isclose(found[0].value, 3.0, rel_tol=0.1),
    )
    assert cpu[0].labels["node"] == node
    prometheus_query(
        f'node_memory_working_set_bytes{{node="{node}"}}',
        lambda found: len(found) == 1 and found[0].value == 2 * 2**30,
    )
    every_node = {
        n.metadata.name for n in core_v1.list_node().items if n.metadata and n.metadata.name
    }
    prometheus_query(
        "node_memory_working_set_bytes",
        lambda found: {s.labels.get("node") for s in found} >= every_node,
    )


def test_second_up_reuses_the_running_cluster(local_cluster: local.LocalCluster) -> None:
    again = local.up(local.ClusterConfig(run_dir=local_cluster.run_dir))
    assert again.reused
    assert again.cluster.ports == local_cluster.ports
    assert local.status(local_cluster.run_dir).healthy


def test_prometheus_scrapes_an_extra_target_a_test_adds(
    local_cluster: local.LocalCluster, prometheus_query: PrometheusQuery
) -> None:
    registry = CollectorRegistry()
    Gauge("smoke_extra_value", "A value only this test exports", registry=registry).set(42)
    server, thread = start_http_server(0, addr="127.0.0.1", registry=registry)
    name = f"smoke-{uuid.uuid4().hex[:6]}"
    try:
        local_cluster.add_scrape_target(name, f"127.0.0.1:{server.server_port}")
        found = prometheus_query(
            f'smoke_extra_value{{target="{name}"}}',
            lambda samples: len(samples) == 1 and samples[0].value == 42,
        )
        assert found[0].labels["job"] == "extra"
    finally:
        local_cluster.remove_scrape_target(name)
        server.shutdown()
        thread.join()


def test_garbage_collector_removes_a_deleted_deployments_replica_sets_and_pods(
    core_v1: client.CoreV1Api, apps_v1: client.AppsV1Api, namespace: str
) -> None:
    create_deployment(apps_v1, namespace, APP, 2)
    wait_for(lambda: len(running_pods(core_v1, namespace, APP)) == 2, what="2 pods Running")
    assert apps_v1.list_namespaced_replica_set(namespace).items

    apps_v1.delete_namespaced_deployment(APP, namespace, propagation_policy="Background")

    def collected() -> bool:
        replica_sets = apps_v1.list_namespaced_replica_set(namespace).items
        pods = core_v1.list_namespaced_pod(namespace, label_selector=f"app={APP}").items
        return not replica_sets and not pods

    wait_for(collected, what="garbage collection of the ReplicaSet and its pods")


def test_rbac_forbids_what_a_service_account_was_not_granted(
    local_cluster: local.LocalCluster, namespace: str
) -> None:
    with local_cluster.api() as impersonating:
        user = f"system:serviceaccount:{namespace}:default"
        impersonating.set_default_header("Impersonate-User", user)
        core = client.CoreV1Api(impersonating)
        with pytest.raises(ApiException) as forbidden:
            core.list_namespaced_pod(namespace)
    assert forbidden.value.status == 403
    assert "cannot list resource" in str(forbidden.value.body)


def _ready_after_scheduled(pod: client.V1Pod) -> float:
    assert pod.status is not None
    times = {c.type: c.last_transition_time for c in pod.status.conditions or []}
    ready, scheduled = times["Ready"], times["PodScheduled"]
    assert ready is not None
    assert scheduled is not None
    return float((ready - scheduled).total_seconds())


def test_a_start_up_delay_annotation_keeps_new_pods_unready_that_long(
    core_v1: client.CoreV1Api, apps_v1: client.AppsV1Api, namespace: str
) -> None:
    slow = local.deployment_manifest("slow", 2, startup_delay="4s")
    fast = local.deployment_manifest("fast", 2)
    for body in (slow, fast):
        apps_v1.create_namespaced_deployment(namespace, body)  # type: ignore[arg-type]
    wait_for(
        lambda: (
            len(running_pods(core_v1, namespace, "slow")) == 2
            and len(running_pods(core_v1, namespace, "fast")) == 2
        ),
        what="both Deployments Running",
    )
    # Condition times are the server's, in whole seconds. How soon kwok marks a pod
    # Ready depends on how busy the machine is; the annotation's delay comes on top.
    slow_delays = [_ready_after_scheduled(pod) for pod in running_pods(core_v1, namespace, "slow")]
    fast_delays = [_ready_after_scheduled(pod) for pod in running_pods(core_v1, namespace, "fast")]
    assert min(slow_delays) >= 3, slow_delays
    assert max(fast_delays) < min(slow_delays), (fast_delays, slow_delays)
