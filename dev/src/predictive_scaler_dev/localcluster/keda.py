"""KEDA's place in the API: its CRDs, its RBAC and the external.metrics.k8s.io APIService.

The CRDs and the operator's ClusterRole and Role are KEDA's own release files
(`config/crd/bases`, `config/rbac/role.yaml` of the module the build compiled),
copied beside its binaries and applied unchanged. The rest follows upstream's
`config/metrics-server` with the changes made for metrics-server
(`localcluster.metrics_server`), for a control plane without pods of its own:

* the subject of every binding is the user of KEDA's client certificate
  (`system:keda`), which the operator and the adapter share as upstream's
  share the `keda-operator` ServiceAccount;
* the adapter's Service is an ExternalName for `localhost`, and its serving
  certificate names `keda-metrics-apiserver.keda.svc`, which the aggregator
  checks.

The HPA controller may already read external.metrics.k8s.io through its
bootstrap role, so upstream's `keda-hpa-controller-external-metrics` binding
is not needed. Everything is server-side applied, so a second `register`
changes nothing, and it runs before the operator starts, whose manager fails
on a kind the API server does not serve yet.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client, dynamic

from predictive_scaler_dev.localcluster.certs import KEDA, KEDA_ADAPTER_SERVICE, KEDA_NAMESPACE, Pki
from predictive_scaler_dev.localcluster.kube import apiservice_manifest, crd_established
from predictive_scaler_dev.localcluster.waiting import wait_until

API_GROUP = "external.metrics.k8s.io"
API_VERSION = "v1beta1"
APISERVICE_NAME = f"{API_VERSION}.{API_GROUP}"
FIELD_MANAGER = "predictive-scaler-localcluster"
_LABELS = {"app.kubernetes.io/part-of": "keda-operator"}
_SUBJECT = {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": KEDA.user}


def _binding(
    kind: str, name: str, role_kind: str, role: str, namespace: str = ""
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "labels": _LABELS}
    if namespace:
        metadata["namespace"] = namespace
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": kind,
        "metadata": metadata,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
        "subjects": [_SUBJECT],
    }


def _upstream_roles(role_file: Path) -> list[dict[str, Any]]:
    return [document for document in yaml.safe_load_all(role_file.read_text()) if document]


def _bindings(roles: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Upstream's role_binding.yaml for each of its roles, and the adapter's auth bindings."""
    bound = [
        _binding(
            "RoleBinding" if role["kind"] == "Role" else "ClusterRoleBinding",
            role["metadata"]["name"],
            role["kind"],
            role["metadata"]["name"],
            role["metadata"].get("namespace", ""),
        )
        for role in roles
    ]
    return [
        *bound,
        # TokenReviews and SubjectAccessReviews for the requests the adapter serves.
        _binding(
            "ClusterRoleBinding",
            "keda-system-auth-delegator",
            "ClusterRole",
            "system:auth-delegator",
        ),
        # The front proxy's CA, in kube-system's extension-apiserver-authentication.
        _binding(
            "RoleBinding",
            "keda-auth-reader",
            "Role",
            "extension-apiserver-authentication-reader",
            "kube-system",
        ),
    ]


def apiservice(port: int, ca_bundle: bytes) -> dict[str, Any]:
    return apiservice_manifest(
        API_GROUP, API_VERSION, KEDA_ADAPTER_SERVICE, port=port, ca_bundle=ca_bundle, labels=_LABELS
    )


def manifests(release_files: Sequence[Path], pki: Pki, adapter_port: int) -> list[dict[str, Any]]:
    """Every object KEDA needs, in the order they must exist: namespace first, APIService last."""
    crds = [yaml.safe_load(f.read_text()) for f in release_files if f.name != "role.yaml"]
    roles = _upstream_roles(next(f for f in release_files if f.name == "role.yaml"))
    service_name, _ = KEDA_ADAPTER_SERVICE
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": KEDA_NAMESPACE}},
        *crds,
        *roles,
        *_bindings(roles),
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": service_name, "namespace": KEDA_NAMESPACE, "labels": _LABELS},
            "spec": {"type": "ExternalName", "externalName": "localhost"},
        },
        apiservice(adapter_port, pki.ca_cert.read_bytes()),
    ]


def register(
    api: client.ApiClient,
    release_files: Sequence[Path],
    pki: Pki,
    adapter_port: int,
    *,
    timeout: float,
) -> None:
    """Apply KEDA's objects and wait until the API server serves its CRDs."""
    # The dynamic client is untyped; it is the one client that applies any kind.
    objects = dynamic.DynamicClient(api)  # type: ignore[no-untyped-call]
    applied = manifests(release_files, pki, adapter_port)
    for body in applied:
        resource = objects.resources.get(api_version=body["apiVersion"], kind=body["kind"])
        objects.server_side_apply(  # type: ignore[no-untyped-call]
            resource,
            body=body,
            name=body["metadata"]["name"],
            namespace=body["metadata"].get("namespace"),
            field_manager=FIELD_MANAGER,
            force_conflicts=True,
        )
    extensions = client.ApiextensionsV1Api(api)
    crd_names = [b["metadata"]["name"] for b in applied if b["kind"] == "CustomResourceDefinition"]

    wait_until(
        lambda: all(crd_established(extensions, name) for name in crd_names),
        timeout=timeout,
        what=f"KEDA's CRDs established ({len(crd_names)})",
    )
