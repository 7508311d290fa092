"""Adapter to the Kubernetes API: the target's scale subresource, rival autoscalers, our status.

Synchronous (the official client); the handlers call it from worker threads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from predictive_scaler.operator.resource import GROUP, KIND, PLURAL, VERSION, ScaleTargetRef

_SCALE_METHODS = {
    "Deployment": "deployment",
    "StatefulSet": "stateful_set",
    "ReplicaSet": "replica_set",
}


class TargetNotFoundError(LookupError):
    pass


@dataclass(frozen=True)
class Scale:
    replicas: int
    selector: str


@dataclass(frozen=True)
class Kubernetes:
    api: client.ApiClient

    def read_scale(self, namespace: str, target: ScaleTargetRef) -> Scale:
        apps = client.AppsV1Api(self.api)
        read = getattr(apps, f"read_namespaced_{_SCALE_METHODS[target.kind]}_scale")
        try:
            scale = read(target.name, namespace)
        except ApiException as error:
            if error.status == 404:
                raise TargetNotFoundError(
                    f"{target.describe()} not found in namespace {namespace}"
                ) from None
            raise
        replicas = scale.spec.replicas if scale.spec and scale.spec.replicas is not None else 0
        selector = scale.status.selector if scale.status and scale.status.selector else ""
        return Scale(int(replicas), selector)

    def patch_scale(self, namespace: str, target: ScaleTargetRef, replicas: int) -> None:
        apps = client.AppsV1Api(self.api)
        patch = getattr(apps, f"patch_namespaced_{_SCALE_METHODS[target.kind]}_scale")
        patch(target.name, namespace, {"spec": {"replicas": replicas}})

    def rival_autoscaler(
        self, namespace: str, name: str, target: ScaleTargetRef, created: str
    ) -> str | None:
        """The HPA, or the older Auto PredictiveScaler, that already sets this target's replicas.

        Between two PredictiveScalers the older one (then the smaller name)
        keeps the target, so exactly one of them acts whatever the order of events.
        """
        hpas = client.AutoscalingV2Api(self.api).list_namespaced_horizontal_pod_autoscaler(
            namespace
        )
        for hpa in hpas.items:
            ref = hpa.spec.scale_target_ref if hpa.spec else None
            if ref is not None and ref.kind == target.kind and ref.name == target.name:
                hpa_name = hpa.metadata.name if hpa.metadata else "?"
                return f"HorizontalPodAutoscaler/{hpa_name}"
        others: Any = client.CustomObjectsApi(self.api).list_namespaced_custom_object(
            GROUP, VERSION, namespace, PLURAL
        )
        mine = (created, name)
        for other in others.get("items", []):
            meta = other.get("metadata", {})
            other_ref = other.get("spec", {}).get("scaleTargetRef", {})
            theirs = (meta.get("creationTimestamp", ""), meta.get("name", ""))
            if (
                meta.get("name") != name
                and other_ref.get("kind") == target.kind
                and other_ref.get("name") == target.name
                and theirs < mine
                and meta.get("deletionTimestamp") is None
                and other.get("spec", {}).get("scaling", {}).get("mode") != "DryRun"
            ):
                return f"{KIND}/{meta.get('name')}"
        return None

    def patch_status(self, namespace: str, name: str, status: dict[str, Any]) -> None:
        client.CustomObjectsApi(self.api).patch_namespaced_custom_object_status(
            GROUP, VERSION, namespace, PLURAL, name, {"status": status}
        )
