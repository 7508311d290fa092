"""metrics-server's place in the API: its RBAC, its Service and the metrics.k8s.io APIService.

The objects are those of metrics-server's own release manifest (components.yaml
of v0.9.0), with two changes for a control plane without pods of its own:

* the subject is the user of metrics-server's client certificate
  (`system:metrics-server`) instead of a ServiceAccount, as for the
  controller-manager and the scheduler;
* the Service is an ExternalName for `localhost`, because Endpoints refuse
  loopback addresses; the aggregator dials an ExternalName Service at the
  APIService's port and checks the certificate against
  `metrics-server.kube-system.svc`, which its serving certificate names.

`register` creates or updates them all (an `up` that reuses nothing starts from
an empty etcd, but a second `register` must not fail), and runs before
metrics-server starts, so its first read of the front proxy's CA is allowed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from predictive_scaler_dev.localcluster.certs import METRICS_SERVER, METRICS_SERVER_SERVICE, Pki
from predictive_scaler_dev.localcluster.kube import apiservice_manifest

API_GROUP = "metrics.k8s.io"
API_VERSION = "v1beta1"
APISERVICE_NAME = f"{API_VERSION}.{API_GROUP}"
_CONFLICT = 409

_SUBJECT = {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": METRICS_SERVER.user}
_LABELS = {"k8s-app": "metrics-server"}


def _cluster_roles() -> list[dict[str, Any]]:
    return [
        {
            "metadata": {
                "name": "system:aggregated-metrics-reader",
                # Users who may view a namespace may read its pods' usage (`kubectl top`).
                "labels": {
                    **_LABELS,
                    "rbac.authorization.k8s.io/aggregate-to-admin": "true",
                    "rbac.authorization.k8s.io/aggregate-to-edit": "true",
                    "rbac.authorization.k8s.io/aggregate-to-view": "true",
                },
            },
            "rules": [
                {
                    "apiGroups": [API_GROUP],
                    "resources": ["pods", "nodes"],
                    "verbs": ["get", "list", "watch"],
                }
            ],
        },
        {
            "metadata": {"name": "system:metrics-server", "labels": _LABELS},
            "rules": [
                {"apiGroups": [""], "resources": ["nodes/metrics"], "verbs": ["get"]},
                {
                    "apiGroups": [""],
                    "resources": ["pods", "nodes"],
                    "verbs": ["get", "list", "watch"],
                },
            ],
        },
    ]


def _cluster_role_bindings() -> list[dict[str, Any]]:
    return [
        {
            # TokenReviews and SubjectAccessReviews for the requests it serves.
            "metadata": {"name": "metrics-server:system:auth-delegator", "labels": _LABELS},
            "roleRef": _role_ref("ClusterRole", "system:auth-delegator"),
            "subjects": [_SUBJECT],
        },
        {
            "metadata": {"name": "system:metrics-server", "labels": _LABELS},
            "roleRef": _role_ref("ClusterRole", "system:metrics-server"),
            "subjects": [_SUBJECT],
        },
    ]


def _role_ref(kind: str, name: str) -> dict[str, str]:
    return {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": name}


def _auth_reader_binding() -> dict[str, Any]:
    # The front proxy's CA and allowed names, in kube-system's
    # extension-apiserver-authentication ConfigMap.
    return {
        "metadata": {"name": "metrics-server-auth-reader", "labels": _LABELS},
        "roleRef": _role_ref("Role", "extension-apiserver-authentication-reader"),
        "subjects": [_SUBJECT],
    }


def _service() -> dict[str, Any]:
    name, _ = METRICS_SERVER_SERVICE
    return {
        "metadata": {"name": name, "labels": _LABELS},
        "spec": {"type": "ExternalName", "externalName": "localhost"},
    }


def apiservice(port: int, ca_bundle: bytes) -> dict[str, Any]:
    return apiservice_manifest(
        API_GROUP,
        API_VERSION,
        METRICS_SERVER_SERVICE,
        port=port,
        ca_bundle=ca_bundle,
        labels=_LABELS,
    )


@dataclass(frozen=True)
class _Kind:
    """The client calls for one kind of object: create, read and replace.

    Loosely typed: the client's signatures name its models, and plain
    manifests are what it is sent here (it serialises either).
    """

    create: Callable[..., Any]
    read: Callable[..., Any]
    replace: Callable[..., Any]

    def create_or_replace(self, body: dict[str, Any]) -> None:
        try:
            self.create(body)
        except ApiException as error:
            if error.status != _CONFLICT:
                raise
            name = body["metadata"]["name"]
            current = self.read(name)
            body["metadata"]["resourceVersion"] = current.metadata.resource_version
            self.replace(name, body)


def register(api: client.ApiClient, pki: Pki, port: int) -> None:
    """Create or update every object metrics-server needs to serve metrics.k8s.io."""
    rbac = client.RbacAuthorizationV1Api(api)
    core = client.CoreV1Api(api)
    registration = client.ApiregistrationV1Api(api)
    _, namespace = METRICS_SERVER_SERVICE
    cluster_roles = _Kind(
        rbac.create_cluster_role, rbac.read_cluster_role, rbac.replace_cluster_role
    )
    cluster_role_bindings = _Kind(
        rbac.create_cluster_role_binding,
        rbac.read_cluster_role_binding,
        rbac.replace_cluster_role_binding,
    )
    role_bindings = _Kind(
        lambda body: rbac.create_namespaced_role_binding(namespace, body),
        lambda name: rbac.read_namespaced_role_binding(name, namespace),
        lambda name, body: rbac.replace_namespaced_role_binding(name, namespace, body),
    )
    services = _Kind(
        lambda body: core.create_namespaced_service(namespace, body),
        lambda name: core.read_namespaced_service(name, namespace),
        lambda name, body: core.replace_namespaced_service(name, namespace, body),
    )
    apiservices = _Kind(
        registration.create_api_service,
        registration.read_api_service,
        registration.replace_api_service,
    )
    for role in _cluster_roles():
        cluster_roles.create_or_replace(role)
    for binding in _cluster_role_bindings():
        cluster_role_bindings.create_or_replace(binding)
    role_bindings.create_or_replace(_auth_reader_binding())
    services.create_or_replace(_service())
    apiservices.create_or_replace(apiservice(port, pki.ca_cert.read_bytes()))
