"""Adapter to the Kubernetes API: the target workload and its scale, and our status.

Synchronous (the official client); the handlers call it from worker threads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from predictive_scaler.operator.resource import GROUP, PLURAL, VERSION, ScaleTargetRef

_WORKLOAD_METHODS = {
    "Deployment": "deployment",
    "StatefulSet": "stateful_set",
    "ReplicaSet": "replica_set",
}


FINALIZER = f"{GROUP}/finalizer"
CRD_NAME = f"{PLURAL}.{GROUP}"


class TargetNotFoundError(LookupError):
    pass


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


@dataclass(frozen=True)
class Kubernetes:
    """:class:`Workloads` (and the operator's other requests) through the official client."""

    api: client.ApiClient

    def read_scale(self, namespace: str, target: ScaleTargetRef) -> Scale:
        """Read the workload itself: one request gives replicas, ready replicas and selector."""
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
        spec, status = workload.spec, workload.status
        replicas = spec.replicas if spec is not None and spec.replicas is not None else 0
        ready = status.ready_replicas if status is not None and status.ready_replicas else 0
        return Scale(int(replicas), int(ready), selector_string(spec.selector if spec else None))

    def patch_scale(self, namespace: str, target: ScaleTargetRef, replicas: int) -> None:
        apps = client.AppsV1Api(self.api)
        patch = getattr(apps, f"patch_namespaced_{_WORKLOAD_METHODS[target.kind]}_scale")
        patch(target.name, namespace, {"spec": {"replicas": replicas}})

    def patch_status(self, namespace: str, name: str, status: dict[str, Any]) -> None:
        client.CustomObjectsApi(self.api).patch_namespaced_custom_object_status(
            GROUP, VERSION, namespace, PLURAL, name, {"status": status}
        )

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
