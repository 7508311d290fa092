from __future__ import annotations

import base64
from pathlib import Path

import yaml

from predictive_scaler_dev.localcluster.certs import write_pki
from predictive_scaler_dev.localcluster.components import KEDA
from predictive_scaler_dev.localcluster.keda import APISERVICE_NAME, manifests

ROLES = """
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: keda-operator
rules: []
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: keda-operator
  namespace: keda
rules: []
"""


def _release(tmp_path: Path) -> list[Path]:
    files = []
    for name in KEDA.release_files:
        path = tmp_path / Path(name).name
        if path.name == "role.yaml":
            path.write_text(ROLES)
        else:
            crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition"}
            path.write_text(yaml.safe_dump({**crd, "metadata": {"name": path.stem}}))
        files.append(path)
    return files


def test_every_crd_and_upstream_role_is_applied_and_bound_to_kedas_user(tmp_path: Path) -> None:
    pki = write_pki(tmp_path / "pki")
    objects = manifests(_release(tmp_path), pki, 6444)
    kinds = [o["kind"] for o in objects]
    assert kinds[0] == "Namespace"
    assert kinds[-1] == "APIService"
    assert kinds.count("CustomResourceDefinition") == 6
    bindings = {
        (o["kind"], o["metadata"]["name"]): o for o in objects if o["kind"].endswith("Binding")
    }
    assert bindings[("ClusterRoleBinding", "keda-operator")]["roleRef"]["kind"] == "ClusterRole"
    role_binding = bindings[("RoleBinding", "keda-operator")]
    assert role_binding["metadata"]["namespace"] == "keda"
    assert bindings[("RoleBinding", "keda-auth-reader")]["metadata"]["namespace"] == "kube-system"
    assert ("ClusterRoleBinding", "keda-system-auth-delegator") in bindings
    for binding in bindings.values():
        assert binding["subjects"] == [
            {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "system:keda"}
        ]


def test_the_external_metrics_api_is_served_by_the_adapter_with_the_cluster_ca(
    tmp_path: Path,
) -> None:
    pki = write_pki(tmp_path / "pki")
    apiservice = manifests(_release(tmp_path), pki, 6444)[-1]
    assert apiservice["metadata"]["name"] == APISERVICE_NAME == "v1beta1.external.metrics.k8s.io"
    spec = apiservice["spec"]
    assert spec["service"] == {"name": "keda-metrics-apiserver", "namespace": "keda", "port": 6444}
    assert base64.b64decode(spec["caBundle"]) == pki.ca_cert.read_bytes()
    assert "insecureSkipTLSVerify" not in spec
