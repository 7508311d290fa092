"""The operator without Prometheus: the `resource:` shorthand read from metrics.k8s.io.

The operator's PROMETHEUS_URL points at a closed port, so whatever it reads
comes from metrics-server through the metric-source seam; a PromQL `query`
is refused with a condition that says why.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from kubernetes import client

import predictive_scaler_dev.localcluster as local
from predictive_scaler.operator.kube import Kubernetes
from predictive_scaler.operator.metrics_api import DEFAULT_POLL_SECONDS, MetricsApiSource
from predictive_scaler.operator.rebalancer import Rebalancer
from predictive_scaler.operator.resource import GROUP, PLURAL, VERSION
from predictive_scaler.operator.settings import OperatorSettings
from predictive_scaler.units import parse_duration
from predictive_scaler_dev.demo.load import LoadDriver
from predictive_scaler_dev.localcluster.configs import METRICS_SERVER_RESOLUTION
from predictive_scaler_dev.localcluster.kube import running_pods, set_pod_usage
from predictive_scaler_dev.localcluster.waiting import wait_until
from tests.fixtures.cluster import (
    KwokNodes,
    create_deployment,
    deployment,
    wait_for,
)
from tests.fixtures.operator import (
    StartOperator,
    condition,
    read_status,
    replicas,
    scaler,
    wait_condition,
)
from tests.fixtures.rebalancing import PODS, WORKLOAD, skewed_pool

BYSTANDER = "bystander"

# Nothing listens here: an operator that asked Prometheus would say so.
NO_PROMETHEUS = "http://127.0.0.1:9"
RESOLUTION = parse_duration(METRICS_SERVER_RESOLUTION)
# One step per poll of the operator's metrics.k8s.io source.
STEP_SECONDS = round(DEFAULT_POLL_SECONDS)
HISTORY_POINTS = 13
# Half the history must be recorded before the object acts (MissingMetrics
# until then), one poll per step, each seeing metrics-server's newest answer;
# then a few evaluations and the pods' start.
FIRST_DECISION = (HISTORY_POINTS / 2 + 6) * STEP_SECONDS + RESOLUTION + 30.0


def test_the_resource_shorthand_scales_on_metrics_server_alone(
    start_operator: StartOperator,
    core_v1: client.CoreV1Api,
    apps_v1: client.AppsV1Api,
    custom_objects: client.CustomObjectsApi,
    namespace: str,
) -> None:
    create_deployment(apps_v1, namespace, "web", 2, cpu_request="1")
    with LoadDriver(core_v1, apps_v1, namespace, "web", lambda _: 3.0):
        start_operator(
            {
                "PROMETHEUS_URL": NO_PROMETHEUS,
                "PREDICTIVE_SCALER_METRICS_SOURCE": "metrics-api",
                "PREDICTIVE_SCALER_REBALANCE_MODE": "DryRun",
            }
        )
        history = f"{(HISTORY_POINTS - 1) * STEP_SECONDS}s"
        body = scaler(
            "web",
            "web",
            metric={"resource": "cpu", "targetPerReplica": "500m"},
            max_replicas=8,
            syncPeriod="5s",
            forecast={
                "models": ["naive"],
                "history": history,
                "step": f"{STEP_SECONDS}s",
                "refresh": "1m",
            },
        )
        custom_objects.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, body)
        query = scaler(
            "by-query",
            "web",
            metric={"query": f'sum(up{{namespace="{namespace}"}})', "targetPerReplica": "1"},
            mode="DryRun",
        )
        custom_objects.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, query)

        refused = wait_condition(
            custom_objects, namespace, "by-query", "Ready", "False", "UnsupportedMetric"
        )
        assert "spec.metric.query needs Prometheus" in refused["message"]

        # 3 cores at 500m each: 6 replicas, read from nothing but metrics-server.
        wait_for(
            lambda: replicas(apps_v1, namespace, "web") == 6,
            timeout=FIRST_DECISION + 60.0,
            what="web scaled to 6 replicas on metrics.k8s.io's usage",
        )
        # Read until it holds, not once: on a busy machine one evaluation can
        # miss metrics-server's newest answer (CI once saw MetricsAvailable
        # False right after the scale-up), and pods just started report no
        # usage until metrics-server has scraped them twice.
        seen: dict[str, Any] = {}

        def three_cores_found() -> bool:
            seen.update(read_status(custom_objects, namespace, "web"))
            found = condition(seen, "MetricsAvailable").get("status") == "True"
            return found and abs(float(seen.get("load", 0.0)) - 3.0) < 0.3

        try:
            wait_until(
                three_cores_found,
                timeout=3 * STEP_SECONDS + 3 * RESOLUTION + 30.0,
                what="web: MetricsAvailable=True and a load of 3 cores",
            )
        except TimeoutError:
            said = core_v1.list_namespaced_event(
                namespace, field_selector="involvedObject.name=web"
            ).items
            pytest.fail(
                f"load {seen.get('load')}, MetricsAvailable {condition(seen, 'MetricsAvailable')}; "
                f"events: {[(event.reason, event.message) for event in said]}"
            )


def test_the_rebalancer_plans_from_metrics_server_usage(
    local_cluster: local.LocalCluster,
    crd: str,
    kube_api: client.ApiClient,
    kwok_nodes: KwokNodes,
    core_v1: client.CoreV1Api,
    apps_v1: client.AppsV1Api,
    custom_objects: client.CustomObjectsApi,
    namespace: str,
) -> None:
    pool = skewed_pool(kwok_nodes, core_v1, apps_v1, custom_objects, namespace)
    # A real node's kubelet reports its own usage; kwok's reports a node's pods', so an
    # empty one has no NodeMetrics, and a node the source does not measure is no
    # destination. A bystander pod (not opted in) gives the cool node a measured load.
    bystander = deployment(BYSTANDER, 1)
    bystander["spec"]["template"]["spec"]["nodeName"] = pool.cool
    apps_v1.create_namespaced_deployment(namespace, bystander)  # type: ignore[arg-type]
    wait_for(
        lambda: len(running_pods(core_v1, namespace, BYSTANDER)) == 1,
        what=f"{BYSTANDER} Running on {pool.cool}",
    )
    (pod,) = running_pods(core_v1, namespace, BYSTANDER)
    assert pod.metadata is not None
    set_pod_usage(core_v1, namespace, str(pod.metadata.name), cpu="200m")
    settings = OperatorSettings.from_environment(
        {
            "PREDICTIVE_SCALER_METRICS_SOURCE": "metrics-api",
            "PREDICTIVE_SCALER_NAMESPACES": namespace,
            "PREDICTIVE_SCALER_REBALANCE_MODE": "DryRun",
            "PREDICTIVE_SCALER_REBALANCE_NODES": f"pool={pool.label}",
            "PREDICTIVE_SCALER_REBALANCE_WEIGHTS": "cpu=1",
        }
    )
    source = MetricsApiSource(kube_api, timeout=10.0, background=False)
    with LoadDriver(core_v1, apps_v1, namespace, WORKLOAD, lambda _: 4.0):

        def hot_node_and_its_pods_report_their_load() -> bool:
            source.poll()
            usage = source.usage()
            node_cpu = usage.nodes.get(pool.hot, {}).get("cpu", 0.0)
            if pool.cool not in usage.nodes:
                return False
            # A pod's PodMetrics can lag its node's by a scrape: the planner
            # moves no pod whose usage it does not know.
            pods_cpu = [
                pod_usage.get("cpu", 0.0)
                for pod, pod_usage in usage.pods.items()
                if pod.namespace == namespace and pod.name.startswith(f"{WORKLOAD}-")
            ]
            return node_cpu > 3.0 and len(pods_cpu) == PODS and sum(pods_cpu) > 3.0

        wait_for(
            hot_node_and_its_pods_report_their_load,
            timeout=3 * RESOLUTION + 60.0,
            what="metrics-server reports the hot node's load and its pods'",
        )
        report = Rebalancer(Kubernetes(kube_api), settings, source).cycle(time.time())
    assert report.plan is not None
    assert report.plan.moves, report.plan.skipped
    assert {m.source for m in report.plan.moves} == {pool.hot}
    assert {m.destination for m in report.plan.moves} == {pool.cool}
    assert report.evicted == ()
