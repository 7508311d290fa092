from __future__ import annotations

import base64

from predictive_scaler_dev.localcluster.kube import NodeShape, kwok_node_manifest
from predictive_scaler_dev.localcluster.metrics_server import APISERVICE_NAME, apiservice


def test_apiservice_points_at_the_service_port_and_trusts_the_cluster_ca() -> None:
    body = apiservice(4443, b"-----BEGIN CERTIFICATE-----\n")
    assert body["metadata"]["name"] == APISERVICE_NAME == "v1beta1.metrics.k8s.io"
    spec = body["spec"]
    assert spec["service"] == {"name": "metrics-server", "namespace": "kube-system", "port": 4443}
    assert base64.b64decode(spec["caBundle"]) == b"-----BEGIN CERTIFICATE-----\n"
    assert "insecureSkipTLSVerify" not in spec


def test_each_kwok_node_names_its_own_resource_metrics_path() -> None:
    annotations = kwok_node_manifest("kwok-node-3", NodeShape())["metadata"]["annotations"]
    assert (
        annotations["metrics.k8s.io/resource-metrics-path"]
        == "/metrics/nodes/kwok-node-3/metrics/resource"
    )
