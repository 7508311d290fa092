"""Any kind with a scale subresource: a custom resource of the test's own, scaled and rebalanced.

``Batch`` (a CRD made here) keeps ``spec.replicas`` pods labelled
``batch=<name>`` and owned by it, through a small controller the test runs:
nothing of apps/v1 is involved. Its scale subresource is all the operator
may use to read and set its replicas, and its pods are found by the
selector the scale reports.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

import predictive_scaler_dev.localcluster as local
from predictive_scaler.operator.rebalancer import Rebalancer
from predictive_scaler.operator.resource import GROUP, PLURAL, VERSION
from predictive_scaler.operator.settings import OperatorSettings
from predictive_scaler_dev.demo.session import mark_evaluated
from predictive_scaler_dev.localcluster import NodeShape
from predictive_scaler_dev.localcluster.kube import set_pod_usage, wait_crd_established
from tests.fixtures.cluster import KwokNodes, wait_for
from tests.fixtures.operator import StartOperator, condition, read_status, scaler

TEST_GROUP = "scaling.test.predictive-scaler.io"
TEST_VERSION = "v1"
KIND, BATCHES = "Batch", "batches"
API_VERSION = f"{TEST_GROUP}/{TEST_VERSION}"
BATCH_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"{BATCHES}.{TEST_GROUP}"},
    "spec": {
        "group": TEST_GROUP,
        "scope": "Namespaced",
        "names": {"kind": KIND, "plural": BATCHES, "singular": "batch"},
        "versions": [
            {
                "name": TEST_VERSION,
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "properties": {
                                    "replicas": {"type": "integer", "minimum": 0},
                                    "pool": {"type": "string"},
                                },
                            },
                            "status": {
                                "type": "object",
                                "properties": {
                                    "replicas": {"type": "integer"},
                                    "selector": {"type": "string"},
                                },
                            },
                        },
                    }
                },
                "subresources": {
                    "status": {},
                    "scale": {
                        "specReplicasPath": ".spec.replicas",
                        "statusReplicasPath": ".status.replicas",
                        "labelSelectorPath": ".status.selector",
                    },
                },
            }
        ],
    },
}


@pytest.fixture(scope="module")
def batch_crd(local_cluster: local.LocalCluster) -> Iterator[str]:
    """The Batch CRD, established; removed after the module's tests."""
    api = local_cluster.api()
    extensions = client.ApiextensionsV1Api(api)
    name = BATCH_CRD["metadata"]["name"]  # type: ignore[index]
    try:
        extensions.create_custom_resource_definition(BATCH_CRD)  # type: ignore[arg-type]
    except ApiException as error:
        if error.status != 409:  # left by an interrupted run: the same definition
            raise
    wait_crd_established(local_cluster.kubeconfig, str(name), timeout=60.0)
    yield str(name)
    extensions.delete_custom_resource_definition(str(name))


def _name(pod: client.V1Pod) -> str:
    assert pod.metadata is not None
    return str(pod.metadata.name)


def _created(pod: client.V1Pod) -> float:
    assert pod.metadata is not None
    assert pod.metadata.creation_timestamp is not None
    return float(pod.metadata.creation_timestamp.timestamp())


@dataclass
class BatchController:
    """Keeps a Batch's pods at its spec.replicas and spreads ``load`` cores over the Running ones.

    The pods are its own (controller owner reference), labelled batch=<name>,
    and land on nodes labelled pool=<spec.pool> when the Batch names one.
    """

    core: client.CoreV1Api
    custom: client.CustomObjectsApi
    namespace: str
    name: str
    load: float
    errors: list[str] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    @property
    def selector(self) -> str:
        return f"batch={self.name}"

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def pods(self) -> list[client.V1Pod]:
        listed = self.core.list_namespaced_pod(self.namespace, label_selector=self.selector)
        return [p for p in listed.items if p.metadata and not p.metadata.deletion_timestamp]

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            try:
                self._reconcile()
            except ApiException as error:
                self.errors.append(f"{error.status} {error.reason}")

    def _reconcile(self) -> None:
        batch: Any = self.custom.get_namespaced_custom_object(
            TEST_GROUP, TEST_VERSION, self.namespace, BATCHES, self.name
        )
        want = int(batch["spec"].get("replicas", 0))
        pods = self.pods()
        for _ in range(want - len(pods)):
            self.core.create_namespaced_pod(self.namespace, self._pod(batch))  # type: ignore[arg-type]
        newest_first = sorted(pods, key=_created, reverse=True)
        for pod in newest_first[: max(0, len(pods) - want)]:
            self.core.delete_namespaced_pod(_name(pod), self.namespace)
        running = [p for p in self.pods() if p.status and p.status.phase == "Running"]
        for pod in running:
            share = f"{round(self.load / len(running) * 1000)}m"
            try:
                set_pod_usage(self.core, self.namespace, _name(pod), cpu=share)
            except ApiException as error:
                if error.status != 404:
                    raise
        status = {"replicas": len(self.pods()), "selector": self.selector}
        self.custom.patch_namespaced_custom_object_status(
            TEST_GROUP, TEST_VERSION, self.namespace, BATCHES, self.name, {"status": status}
        )

    def _pod(self, batch: Any) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "containers": [
                {
                    "name": "app",
                    "image": "registry.invalid/app:1",
                    "resources": {"requests": {"cpu": "500m", "memory": "64Mi"}},
                }
            ]
        }
        if batch["spec"].get("pool"):
            spec["nodeSelector"] = {"pool": batch["spec"]["pool"]}
        owner = {
            "apiVersion": API_VERSION,
            "kind": KIND,
            "name": self.name,
            "uid": batch["metadata"]["uid"],
            "controller": True,
        }
        return {
            "metadata": {
                "name": f"{self.name}-{uuid.uuid4().hex[:5]}",
                "labels": {"batch": self.name},
                "ownerReferences": [owner],
            },
            "spec": spec,
        }


def create_batch(
    custom: client.CustomObjectsApi, namespace: str, name: str, replicas: int, pool: str = ""
) -> None:
    body = {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {"name": name},
        "spec": {"replicas": replicas, "pool": pool},
    }
    custom.create_namespaced_custom_object(TEST_GROUP, TEST_VERSION, namespace, BATCHES, body)


def batch_replicas(custom: client.CustomObjectsApi, namespace: str, name: str) -> int:
    found: Any = custom.get_namespaced_custom_object(
        TEST_GROUP, TEST_VERSION, namespace, BATCHES, name
    )
    return int(found["spec"]["replicas"])


def target(name: str) -> dict[str, str]:
    return {"apiVersion": API_VERSION, "kind": KIND, "name": name}


def test_a_custom_resource_is_scaled_through_its_scale_subresource(
    batch_crd: str,
    start_operator: StartOperator,
    core_v1: client.CoreV1Api,
    custom_objects: client.CustomObjectsApi,
    namespace: str,
) -> None:
    create_batch(custom_objects, namespace, "web", 2)
    controller = BatchController(core_v1, custom_objects, namespace, "web", load=3.0)
    controller.start()
    try:
        start_operator({"PREDICTIVE_SCALER_REBALANCE_MODE": "Off"})
        body = scaler(
            "web", "web", metric={"resource": "cpu", "targetPerReplica": "500m"}, max_replicas=8
        )
        body["spec"]["scaleTargetRef"] = target("web")
        custom_objects.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, body)
        # 3 cores at 500m a replica: 6, patched through the Batch's scale subresource.
        wait_for(
            lambda: batch_replicas(custom_objects, namespace, "web") == 6,
            timeout=120,
            what="the Batch scaled to 6 through its scale subresource",
        )
        # The status of the evaluation that scaled is written after its scale patch.
        wait_for(
            lambda: (
                condition(read_status(custom_objects, namespace, "web"), "Ready").get("status")
                == "True"
            ),
            what="Ready=True once the scaling evaluation's status is written",
        )
        # Ready replicas come from the pods its selector finds (Batch reports none).
        wait_for(
            lambda: read_status(custom_objects, namespace, "web").get("currentReplicas") == 6,
            what="status counts the Batch's six replicas",
        )
        assert not controller.errors, controller.errors
    finally:
        controller.stop()


def test_a_kind_without_a_scale_subresource_is_named(
    start_operator: StartOperator,
    core_v1: client.CoreV1Api,
    custom_objects: client.CustomObjectsApi,
    namespace: str,
) -> None:
    start_operator({"PREDICTIVE_SCALER_REBALANCE_MODE": "Off"})
    body = scaler("cm", "settings", metric={"resource": "cpu", "targetPerReplica": "1"})
    body["spec"]["scaleTargetRef"] = {"apiVersion": "v1", "kind": "ConfigMap", "name": "settings"}
    custom_objects.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, body)

    def refused() -> bool:
        ready = condition(read_status(custom_objects, namespace, "cm"), "Ready")
        return ready.get("reason") == "TargetNotScalable"

    wait_for(refused, what="Ready=False, TargetNotScalable for a ConfigMap")
    message = condition(read_status(custom_objects, namespace, "cm"), "Ready")["message"]
    assert "ConfigMap (v1) has no scale subresource" in message


def test_the_pods_of_a_custom_resource_are_rebalanced(
    batch_crd: str,
    local_cluster: local.LocalCluster,
    crd: str,
    kube_api: client.ApiClient,
    kwok_nodes: KwokNodes,
    core_v1: client.CoreV1Api,
    custom_objects: client.CustomObjectsApi,
    namespace: str,
) -> None:
    pool = f"pool-{uuid.uuid4().hex[:6]}"
    shape = NodeShape(cpu="8", memory="32Gi", labels={"pool": pool})
    (hot,) = kwok_nodes.create(shape)
    create_batch(custom_objects, namespace, "batch", 4, pool=pool)
    controller = BatchController(core_v1, custom_objects, namespace, "batch", load=4.0)
    controller.start()
    try:

        def on(node: str) -> list[str]:
            return [
                _name(p)
                for p in controller.pods()
                if p.spec and p.spec.node_name == node and p.status and p.status.phase == "Running"
            ]

        wait_for(lambda: len(on(hot)) == 4, what="the Batch's four pods Running on one node")
        (cool,) = kwok_nodes.create(shape)
        body = scaler("batch", "batch", metric={"resource": "cpu", "targetPerReplica": "1"})
        body["spec"]["scaleTargetRef"] = target("batch")
        body["spec"]["scaling"]["mode"] = "DryRun"
        body["spec"]["rebalance"] = {"enabled": True}
        custom_objects.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, body)
        mark_evaluated(custom_objects, namespace, "batch")  # no operator runs here
        settings = OperatorSettings.from_environment(
            {
                "PROMETHEUS_URL": local_cluster.prometheus_url,
                "PREDICTIVE_SCALER_NAMESPACES": namespace,
                "PREDICTIVE_SCALER_SCRAPE_INTERVAL": "2s",
                "PREDICTIVE_SCALER_REBALANCE_MODE": "Auto",
                "PREDICTIVE_SCALER_REBALANCE_NODES": f"pool={pool}",
                "PREDICTIVE_SCALER_REBALANCE_WEIGHTS": "cpu=1",
            }
        )
        rebalancer = Rebalancer.from_settings(kube_api, settings)

        def moved() -> bool:
            report = rebalancer.cycle(time.time())
            return bool(report.evicted)

        # Until Prometheus has the hot node's usage a cycle plans nothing.
        wait_for(moved, timeout=90, what="a Batch pod evicted off the hot node")
        wait_for(lambda: len(on(cool)) >= 1, what="its replacement Running on the cool node")
        assert not controller.errors, controller.errors
    finally:
        controller.stop()
