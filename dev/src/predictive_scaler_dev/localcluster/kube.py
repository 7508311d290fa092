"""Kubernetes-side helpers for the local cluster: kwok nodes and simulated pod usage.

Used by `up`, by the test fixtures and by the demo, so a node or a pod's load
is made the same way everywhere.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

from predictive_scaler_dev.localcluster.configs import (
    KWOK_NODE_ANNOTATION,
    KWOK_NODE_ANNOTATION_VALUE,
    STARTUP_DELAY_ANNOTATION,
)
from predictive_scaler_dev.localcluster.waiting import wait_until

USAGE_CPU_ANNOTATION = "kwok.x-k8s.io/usage-cpu"
USAGE_MEMORY_ANNOTATION = "kwok.x-k8s.io/usage-memory"
# Where metrics-server reads a node's kubelet resource metrics; kwok serves
# every node's under the path its own Metric object declares.
RESOURCE_METRICS_PATH_ANNOTATION = "metrics.k8s.io/resource-metrics-path"


@dataclass(frozen=True)
class NodeShape:
    """What a simulated node offers the scheduler."""

    cpu: str = "16"
    memory: str = "64Gi"
    pods: int = 110
    labels: Mapping[str, str] = field(default_factory=dict)


def api_client(kubeconfig: Path) -> client.ApiClient:
    api: client.ApiClient = config.new_client_from_config(  # type: ignore[no-untyped-call]
        config_file=str(kubeconfig)
    )
    return api


def kwok_node_manifest(name: str, shape: NodeShape) -> dict[str, Any]:
    resources = {"cpu": shape.cpu, "memory": shape.memory, "pods": str(shape.pods)}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            # kwok manages only nodes carrying this annotation (see its start flags).
            "annotations": {
                KWOK_NODE_ANNOTATION: KWOK_NODE_ANNOTATION_VALUE,
                "node.alpha.kubernetes.io/ttl": "0",
                RESOURCE_METRICS_PATH_ANNOTATION: f"/metrics/nodes/{name}/metrics/resource",
            },
            "labels": {
                "kubernetes.io/arch": "amd64",
                "kubernetes.io/os": "linux",
                "kubernetes.io/hostname": name,
                "type": "kwok",
                **shape.labels,
            },
        },
        # A node may be created with its status, as a kubelet registers; kwok's
        # node-initialize stage keeps these capacities and marks the node Ready.
        "status": {
            "allocatable": resources,
            "capacity": resources,
            "phase": "Running",
        },
    }


def create_kwok_node(core: client.CoreV1Api, name: str, shape: NodeShape = NodeShape()) -> None:
    # The client sends a plain manifest as it is; its signature names only V1Node.
    core.create_node(kwok_node_manifest(name, shape))  # type: ignore[arg-type]


def is_ready(node: client.V1Node) -> bool:
    conditions = (node.status.conditions if node.status else None) or []
    return any(c.type == "Ready" and c.status == "True" for c in conditions)


def _schedulable(node: client.V1Node) -> bool:
    taints = (node.spec.taints if node.spec else None) or []
    return is_ready(node) and not any(t.key == "node.kubernetes.io/not-ready" for t in taints)


def wait_nodes_ready(core: client.CoreV1Api, names: Iterable[str], *, timeout: float) -> None:
    """Poll until every named node reports Ready=True and has no not-ready taint."""
    wanted = set(names)
    deadline = time.monotonic() + timeout
    while True:
        ready = {
            node.metadata.name
            for node in core.list_node().items
            if node.metadata is not None and _schedulable(node)
        }
        pending = sorted(wanted - ready)
        if not pending:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"nodes not Ready within {timeout:.0f} s: {', '.join(pending)}")
        time.sleep(0.2)


def set_pod_usage(
    core: client.CoreV1Api,
    namespace: str,
    pod: str,
    *,
    cpu: str | None = None,
    memory: str | None = None,
) -> None:
    """Set a pod's simulated usage (Kubernetes quantities, e.g. "250m", "128Mi").

    kwok reads these annotations through the ClusterResourceUsage it was started
    with and reports them as kubelet resource metrics; None removes one.
    """
    annotations = {USAGE_CPU_ANNOTATION: cpu, USAGE_MEMORY_ANNOTATION: memory}
    core.patch_namespaced_pod(pod, namespace, {"metadata": {"annotations": annotations}})


def deployment_manifest(
    name: str,
    replicas: int,
    *,
    cpu_request: str = "100m",
    startup_delay: str | None = None,
) -> dict[str, Any]:
    """A Deployment of pods labelled app=<name>; kwok runs them, the image is never pulled.

    ``startup_delay`` (a Go duration, "4s") keeps each new pod unready that
    long, through the local cluster's delayed pod-ready stage.
    """
    labels = {"app": name}
    template_meta: dict[str, Any] = {"labels": labels}
    if startup_delay is not None:
        template_meta["annotations"] = {STARTUP_DELAY_ANNOTATION: startup_delay}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": template_meta,
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "image": "registry.invalid/app:1",
                            "resources": {"requests": {"cpu": cpu_request, "memory": "64Mi"}},
                        }
                    ]
                },
            },
        },
    }


def running_pods(core: client.CoreV1Api, namespace: str, app: str) -> list[client.V1Pod]:
    """Pods labelled app=<app> that are Running and not being deleted: the ones serving."""
    return [
        p
        for p in core.list_namespaced_pod(namespace, label_selector=f"app={app}").items
        if p.status is not None
        and p.status.phase == "Running"
        and p.metadata is not None
        and p.metadata.deletion_timestamp is None
    ]


def create_namespace(core: client.CoreV1Api, name: str, *, timeout: float = 60.0) -> None:
    """Create a namespace and wait for its `default` ServiceAccount.

    Pods are refused until the service-account controller has made it.
    """
    core.create_namespace({"metadata": {"name": name}})  # type: ignore[arg-type]

    def has_default_service_account() -> bool:
        try:
            core.read_namespaced_service_account("default", name)
        except ApiException as error:
            if error.status == 404:
                return False
            raise
        return True

    wait_until(has_default_service_account, timeout=timeout, what=f"ServiceAccount {name}/default")


def wait_crd_established(kubeconfig: Path, name: str, *, timeout: float = 60.0) -> None:
    """Wait until the API server serves the CRD ``name`` and lists its objects.

    Not ``kubectl wait --for=condition=Established``: on a CRD created a
    moment ago, before the API server has written any condition, it fails at
    once (".status.conditions accessor error: <nil>") instead of waiting.
    Established is not enough either: the first lists after it can be
    refused with 429 "storage is (re)initializing" while the resource's watch
    cache fills, and an operator started then logs its first request as an
    ERROR (kopf retries it).
    """
    api = api_client(kubeconfig)
    extensions = client.ApiextensionsV1Api(api)
    objects = client.CustomObjectsApi(api)

    def serving() -> bool:
        crd = _established_crd(extensions, name)
        return crd is not None and _lists(objects, crd)

    wait_until(serving, timeout=timeout, what=f"CRD {name} established and listing")


def _lists(objects: client.CustomObjectsApi, crd: client.V1CustomResourceDefinition) -> bool:
    """Whether a list of the CRD's objects (its storage version) is answered."""
    version = next(v.name for v in crd.spec.versions if v.storage)
    try:
        objects.list_cluster_custom_object(crd.spec.group, version, crd.spec.names.plural, limit=1)
    except ApiException as error:
        if error.status == 429:
            return False
        raise
    return True


def crd_established(extensions: client.ApiextensionsV1Api, name: str) -> bool:
    """Whether the API server serves the CRD ``name`` (False while it does not exist yet)."""
    return _established_crd(extensions, name) is not None


def _established_crd(
    extensions: client.ApiextensionsV1Api, name: str
) -> client.V1CustomResourceDefinition | None:
    """The CRD ``name`` once it is Established, else None (also while it does not exist)."""
    try:
        crd = extensions.read_custom_resource_definition(name)
    except ApiException as error:
        if error.status == 404:
            return None
        raise
    conditions = (crd.status and crd.status.conditions) or []
    established = any(c.type == "Established" and c.status == "True" for c in conditions)
    return crd if established else None


def apiservice_manifest(
    group: str,
    version: str,
    service: tuple[str, str],
    *,
    port: int,
    ca_bundle: bytes,
    labels: dict[str, str],
) -> dict[str, Any]:
    """An aggregated API, served at ``service`` (name, namespace) and trusted by the CA bundle."""
    name, namespace = service
    return {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": f"{version}.{group}", "labels": labels},
        "spec": {
            "group": group,
            "version": version,
            "service": {"name": name, "namespace": namespace, "port": port},
            "caBundle": base64.b64encode(ca_bundle).decode(),
            "groupPriorityMinimum": 100,
            "versionPriority": 100,
        },
    }
