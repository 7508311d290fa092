"""Adapter to the Kubernetes API: every request the operator's own code sends.

The target workload and its scale, our status, and what the rebalancer and
the scale-in ranking read and write (nodes, pods, evictions, taints,
annotations, Events).

Synchronous (the official client); the handlers call it from worker threads.
"""

from __future__ import annotations

import datetime
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from kubernetes import client
from kubernetes.client.exceptions import ApiException
from kubernetes.dynamic import DynamicClient
from kubernetes.dynamic.exceptions import NotFoundError, ResourceNotFoundError
from kubernetes.dynamic.resource import Resource

from predictive_scaler.operator.resource import GROUP, PLURAL, VERSION, ScaleTargetRef
from predictive_scaler.refs import NodeRef, PodRef, ScalerRef

# apps/v1 kinds are read with one typed request (replicas, ready replicas and
# selector at once); any other kind through its scale subresource.
_APPS_V1 = "apps/v1"
_WORKLOAD_METHODS = {
    "Deployment": "deployment",
    "StatefulSet": "stateful_set",
    "ReplicaSet": "replica_set",
}


FINALIZER = f"{GROUP}/finalizer"
# Compare-and-swap writes retried on 409 this many times before the cycle gives up.
CONFLICT_ATTEMPTS = 5
# A node's taints as they are -> as they should be, or None when nothing needs to change.
TaintChange = Callable[[list[client.V1Taint]], list[client.V1Taint] | None]
CRD_NAME = f"{PLURAL}.{GROUP}"


class TargetError(LookupError):
    """The target cannot be scaled; ``reason`` is the condition's reason."""

    reason = "TargetNotFound"


class TargetNotFoundError(TargetError):
    pass


class TargetNotScalableError(TargetError):
    reason = "TargetNotScalable"


class TargetControlledError(TargetError):
    reason = "TargetControlled"


def _refuse_controlled(target: ScaleTargetRef, owners: Iterable[tuple[bool, str, str]]) -> None:
    """A target its controller keeps (a Deployment's ReplicaSet) would be fought over.

    ``owners`` are the target's owner references as (controller, kind, name).
    A controlling owner manages the whole object, its replicas included: the
    only rule that holds for owners nobody here knows.
    """
    for controller, kind, name in owners:
        if controller:
            raise TargetControlledError(
                f"{target.describe()} is controlled by {kind}/{name}, which sets its replicas "
                f"and would undo this object's: target {kind}/{name} instead"
            )


@dataclass(frozen=True)
class Scale:
    replicas: int  # spec.replicas
    ready: int  # status.readyReplicas
    selector: str  # the pods' label selector, in the scale subresource's string form


def selector_string(selector: client.V1LabelSelector | None) -> str:
    """``matchLabels`` and ``matchExpressions`` as a ``label_selector`` query parameter."""
    if selector is None:
        return ""
    terms = [f"{key}={value}" for key, value in sorted((selector.match_labels or {}).items())]
    for expression in selector.match_expressions or []:
        values = ",".join(expression.values or [])
        terms.append(
            {
                "In": f"{expression.key} in ({values})",
                "NotIn": f"{expression.key} notin ({values})",
                "Exists": expression.key,
                "DoesNotExist": f"!{expression.key}",
            }[expression.operator]
        )
    return ",".join(terms)


class Workloads(Protocol):
    """What an evaluation needs of the API: the target's scale, and the object's status."""

    def read_scale(self, namespace: str, target: ScaleTargetRef) -> Scale: ...

    def patch_scale(self, namespace: str, target: ScaleTargetRef, replicas: int) -> None: ...

    def patch_status(self, namespace: str, name: str, status: dict[str, Any]) -> None: ...


class _Discovery:
    """kubernetes.dynamic's client, made on first use: its discovery reads the API server."""

    def __init__(self) -> None:
        self._client: DynamicClient | None = None
        self._lock = threading.Lock()

    def client(self, api: client.ApiClient) -> DynamicClient:
        with self._lock:
            if self._client is None:
                self._client = DynamicClient(api)  # type: ignore[no-untyped-call]
            return self._client


def _is_ready(pod: client.V1Pod) -> bool:
    if pod.metadata is None or pod.metadata.deletion_timestamp is not None or pod.status is None:
        return False
    return any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions or [])


@dataclass(frozen=True)
class Kubernetes:
    """:class:`Workloads` (and the operator's other requests) through the official client."""

    api: client.ApiClient
    _discovery: _Discovery = field(default_factory=_Discovery, compare=False, repr=False)

    def read_scale(self, namespace: str, target: ScaleTargetRef) -> Scale:
        """The target's replicas, ready replicas and pod selector.

        An apps/v1 workload is read itself, in one request. Any other kind is
        read through its scale subresource (replicas, selector) and its own
        ``status.readyReplicas``, or, where it has none, its Ready pods.
        """
        if target.api_version != _APPS_V1 or target.kind not in _WORKLOAD_METHODS:
            return self._read_any_scale(namespace, target)
        apps = client.AppsV1Api(self.api)
        read = getattr(apps, f"read_namespaced_{_WORKLOAD_METHODS[target.kind]}")
        try:
            workload = read(target.name, namespace)
        except ApiException as error:
            if error.status == 404:
                raise TargetNotFoundError(
                    f"{target.describe()} not found in namespace {namespace}"
                ) from None
            raise
        references = (workload.metadata.owner_references if workload.metadata else None) or []
        _refuse_controlled(target, ((bool(r.controller), r.kind, r.name) for r in references))
        spec, status = workload.spec, workload.status
        replicas = spec.replicas if spec is not None and spec.replicas is not None else 0
        ready = status.ready_replicas if status is not None and status.ready_replicas else 0
        return Scale(int(replicas), int(ready), selector_string(spec.selector if spec else None))

    def _scalable(self, target: ScaleTargetRef) -> tuple[Resource, Resource]:
        """The target's resource and its scale subresource, found by discovery."""
        resources = self._discovery.client(self.api).resources
        try:
            resource = resources.get(api_version=target.api_version, kind=target.kind)
        except ResourceNotFoundError:
            raise TargetNotFoundError(
                f"the API server serves no kind {target.kind} in {target.api_version}"
            ) from None
        scale = resource.subresources.get("scale")
        if scale is None:
            raise TargetNotScalableError(
                f"{target.kind} ({target.api_version}) has no scale subresource: "
                "the operator (like the HPA) sets replicas only through one"
            )
        return resource, scale

    def _read_any_scale(self, namespace: str, target: ScaleTargetRef) -> Scale:
        resource, scale_resource = self._scalable(target)
        try:
            scale = scale_resource.get(name=target.name, namespace=namespace).to_dict()
            workload = resource.get(name=target.name, namespace=namespace).to_dict()
        except NotFoundError:
            raise TargetNotFoundError(
                f"{target.describe()} not found in namespace {namespace}"
            ) from None
        references = (workload.get("metadata") or {}).get("ownerReferences") or []
        _refuse_controlled(
            target,
            (
                (bool(r.get("controller")), str(r.get("kind")), str(r.get("name")))
                for r in references
            ),
        )
        replicas = int((scale.get("spec") or {}).get("replicas") or 0)
        selector = str((scale.get("status") or {}).get("selector") or "")
        ready = (workload.get("status") or {}).get("readyReplicas")
        if ready is None:
            ready = sum(_is_ready(pod) for pod in self.list_pods(namespace, selector))
        return Scale(replicas, int(ready), selector)

    def patch_scale(self, namespace: str, target: ScaleTargetRef, replicas: int) -> None:
        if target.api_version != _APPS_V1 or target.kind not in _WORKLOAD_METHODS:
            _, scale = self._scalable(target)
            scale.patch(
                body={"spec": {"replicas": replicas}},
                name=target.name,
                namespace=namespace,
                content_type="application/merge-patch+json",
            )
            return
        apps = client.AppsV1Api(self.api)
        patch = getattr(apps, f"patch_namespaced_{_WORKLOAD_METHODS[target.kind]}_scale")
        patch(target.name, namespace, {"spec": {"replicas": replicas}})

    def patch_status(self, namespace: str, name: str, status: dict[str, Any]) -> None:
        client.CustomObjectsApi(self.api).patch_namespaced_custom_object_status(
            GROUP, VERSION, namespace, PLURAL, name, {"status": status}
        )

    # ---- what the rebalancer and the scale-in ranking read and write ---------

    def list_nodes(self, selector: str | None = None) -> list[client.V1Node]:
        return list(client.CoreV1Api(self.api).list_node(label_selector=selector).items)

    def list_running_pods(self) -> list[client.V1Pod]:
        core = client.CoreV1Api(self.api)
        return list(core.list_pod_for_all_namespaces(field_selector="status.phase=Running").items)

    def list_pods(self, namespace: str, selector: str) -> list[client.V1Pod]:
        core = client.CoreV1Api(self.api)
        return list(core.list_namespaced_pod(namespace, label_selector=selector).items)

    def list_replica_sets(self) -> list[client.V1ReplicaSet]:
        apps = client.AppsV1Api(self.api)
        return list(apps.list_replica_set_for_all_namespaces().items)

    def list_scalers(self, shard: str = "") -> list[dict[str, Any]]:
        """Every PredictiveScaler this operator serves (all namespaces, its shard)."""
        found: Any = client.CustomObjectsApi(self.api).list_cluster_custom_object(
            GROUP, VERSION, PLURAL, label_selector=shard
        )
        items: list[dict[str, Any]] = found.get("items", [])
        return items

    def annotate_pod(self, pod: PodRef, annotations: Mapping[str, str | None]) -> bool:
        """Merge ``annotations`` into the pod's (None removes one); False when the pod is gone."""
        try:
            client.CoreV1Api(self.api).patch_namespaced_pod(
                pod.name, pod.namespace, {"metadata": {"annotations": dict(annotations)}}
            )
        except ApiException as error:
            if error.status == 404:
                return False
            raise
        return True

    def annotate(self, target: NodeRef | ScalerRef, key: str, value: str | None) -> None:
        """Set (or, with None, remove) one annotation of a Node or a PredictiveScaler."""
        patch = {"metadata": {"annotations": {key: value}}}
        if isinstance(target, NodeRef):
            client.CoreV1Api(self.api).patch_node(target.name, patch)
        else:
            client.CustomObjectsApi(self.api).patch_namespaced_custom_object(
                GROUP, VERSION, target.namespace, PLURAL, target.name, patch
            )

    def _serialised(self, taint: client.V1Taint) -> dict[str, Any]:
        shown: dict[str, Any] = self.api.sanitize_for_serialization(taint)  # type: ignore[no-untyped-call]
        return shown

    def update_taints(self, node: str, change: TaintChange) -> bool:
        """Make ``change`` to the node's taints as they are now; False when it made none.

        A patch replaces the whole taint list, so it is written only onto the
        version it was computed from: a taint another controller added in the
        meantime (cluster-autoscaler's ToBeDeleted, the node lifecycle
        controller's unreachable) makes the API server answer 409, and the
        change is made again on the list that holds it, instead of erasing it.
        """
        core = client.CoreV1Api(self.api)
        for _ in range(CONFLICT_ATTEMPTS):
            found = core.read_node(node)
            wanted = change(list((found.spec.taints if found.spec else None) or []))
            if wanted is None:
                return False
            version = found.metadata.resource_version if found.metadata else None
            patch = {
                "metadata": {"resourceVersion": version},
                # camelCase as the API has it (timeAdded), not the client's snake_case.
                "spec": {"taints": [self._serialised(taint) for taint in wanted]},
            }
            try:
                core.patch_node(node, patch)
            except ApiException as error:
                if error.status == 409:
                    continue
                raise
            return True
        raise ApiException(
            status=409,
            reason=f"the taints of {node} changed under {CONFLICT_ATTEMPTS} updates in a row",
        )

    def evict(self, pod: PodRef) -> None:
        """Ask the Eviction API to move the pod (PodDisruptionBudgets hold: 429)."""
        body = {"metadata": {"name": pod.name, "namespace": pod.namespace}}
        client.CoreV1Api(self.api).create_namespaced_pod_eviction(
            pod.name,
            pod.namespace,
            body,  # type: ignore[arg-type]
        )

    def post_event(self, pod: PodRef, kind: str, reason: str, message: str, component: str) -> str:
        """An Event about a pod, and its name (kopf's event API serves only its handlers)."""
        now = datetime.datetime.now(datetime.UTC)
        body = {
            "metadata": {"generateName": f"{pod.name}.", "namespace": pod.namespace},
            "involvedObject": {
                "kind": "Pod",
                "namespace": pod.namespace,
                "name": pod.name,
                "apiVersion": "v1",
            },
            "reason": reason,
            "message": message,
            "type": kind,
            "source": {"component": component},
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
        }
        created = client.CoreV1Api(self.api).create_namespaced_event(pod.namespace, body)  # type: ignore[arg-type]
        return str(created.metadata.name) if created.metadata else ""

    def repeat_event(self, namespace: str, name: str, count: int, message: str) -> bool:
        """Count an Event that happened again; False when it has expired (a new one is due)."""
        now = datetime.datetime.now(datetime.UTC)
        try:
            client.CoreV1Api(self.api).patch_namespaced_event(
                name, namespace, {"count": count, "lastTimestamp": now, "message": message}
            )
        except ApiException as error:
            if error.status == 404:
                return False
            raise
        return True

    def release_if_crd_deleted(self, namespaces: tuple[str, ...], shard: str = "") -> list[str]:
        """Remove our finalizer from every object once their CRD is being deleted.

        A terminating CRD loses its patch verb in discovery, so kopf stops
        serving it and would never release the finalizers itself: the CRD
        would hang in Terminating. Our finalizer only guards in-memory state
        (the object's daemon and metrics), and the objects are being deleted
        anyway, so letting them go loses nothing and leaves workloads as they are.
        """
        listed = client.ApiextensionsV1Api(self.api).list_custom_resource_definition(
            field_selector=f"metadata.name={CRD_NAME}"
        )
        terminating = [
            crd
            for crd in listed.items
            if crd.metadata is not None and crd.metadata.deletion_timestamp is not None
        ]
        if not terminating:
            return []
        custom = client.CustomObjectsApi(self.api)
        found: list[Any] = []
        for namespace in namespaces or (None,):
            page: Any = (
                custom.list_namespaced_custom_object(
                    GROUP, VERSION, namespace, PLURAL, label_selector=shard
                )
                if namespace
                else custom.list_cluster_custom_object(GROUP, VERSION, PLURAL, label_selector=shard)
            )
            found.extend(page.get("items", []))
        released = []
        for item in found:
            meta = item.get("metadata", {})
            finalizers = list(meta.get("finalizers") or [])
            if FINALIZER not in finalizers:
                continue
            kept = [f for f in finalizers if f != FINALIZER]
            # resourceVersion makes this a compare-and-swap: another writer's
            # finalizers are never dropped; a conflict is retried next turn.
            patch = {"metadata": {"finalizers": kept, "resourceVersion": meta["resourceVersion"]}}
            try:
                custom.patch_namespaced_custom_object(
                    GROUP, VERSION, meta["namespace"], PLURAL, meta["name"], patch
                )
            except ApiException as error:
                if error.status not in (404, 409):
                    raise
                continue
            released.append(f"{meta['namespace']}/{meta['name']}")
        return released
