"""The API server enforces the PredictiveScaler schema: bad objects are refused, field named."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

import predictive_scaler.localcluster as local
from predictive_scaler.operator.resource import GROUP, PLURAL, VERSION, PredictiveScalerSpec
from tests.fixtures.operator import kubectl, scaler

VALID = scaler("valid", "web", metric={"resource": "cpu", "targetPerReplica": "500m"})


def with_spec(**changes: Any) -> dict[str, Any]:
    body = copy.deepcopy(VALID)
    body["metadata"]["name"] = "invalid"
    for path, value in changes.items():
        node = body["spec"]
        *parents, leaf = path.split("__")
        for parent in parents:
            node = node.setdefault(parent, {})
        if value is None:
            node.pop(leaf, None)
        else:
            node[leaf] = value
    return body


INVALID = {
    "min above max": (with_spec(minReplicas=5, maxReplicas=3), "spec.minReplicas"),
    "both resource and query": (
        with_spec(metric={"resource": "cpu", "query": "up", "targetPerReplica": "1"}),
        "spec.metric",
    ),
    "neither resource nor query": (with_spec(metric={"targetPerReplica": "1"}), "spec.metric"),
    "negative target": (
        with_spec(metric={"resource": "cpu", "targetPerReplica": "-1"}),
        "spec.metric.targetPerReplica",
    ),
    "malformed quantity": (
        with_spec(metric={"resource": "cpu", "targetPerReplica": "lots"}),
        "spec.metric.targetPerReplica",
    ),
    "malformed duration": (with_spec(forecast__history="6 hours"), "spec.forecast.history"),
    "unknown model": (with_spec(forecast__models=["prophet"]), "spec.forecast.models[0]"),
    "interval out of range": (with_spec(forecast__interval=1.5), "spec.forecast.interval"),
    "zero replicas": (with_spec(minReplicas=0), "spec.minReplicas"),
    "unknown mode": (with_spec(scaling__mode="Yolo"), "spec.scaling.mode"),
    "wrong target kind": (
        with_spec(scaleTargetRef={"apiVersion": "apps/v1", "kind": "Pod", "name": "x"}),
        "spec.scaleTargetRef.kind",
    ),
    "missing maxReplicas": (with_spec(maxReplicas=None), "spec.maxReplicas"),
    "bad behavior policy": (
        with_spec(
            scaling__behavior={
                "scaleDown": {"policies": [{"type": "Pods", "value": 0, "periodSeconds": 5}]}
            }
        ),
        "spec.scaling.behavior.scaleDown.policies[0].value",
    ),
    "wrong type": (with_spec(maxReplicas="ten"), "spec.maxReplicas"),
}


@pytest.mark.parametrize("case", sorted(INVALID))
def test_invalid_objects_are_refused_with_the_field_named(
    case: str, crd: str, custom_objects: client.CustomObjectsApi, namespace: str
) -> None:
    body, field = INVALID[case]
    with pytest.raises(ApiException) as refused:
        custom_objects.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, body)
    assert refused.value.status == 422
    details = json.loads(refused.value.body or "{}")
    fields = [cause.get("field", "") for cause in details["details"]["causes"]]
    assert field in fields, f"{case}: {details['message']}"


def test_a_valid_object_gets_the_schema_defaults_the_operator_also_assumes(
    crd: str, custom_objects: client.CustomObjectsApi, namespace: str
) -> None:
    created: Any = custom_objects.create_namespaced_custom_object(
        GROUP,
        VERSION,
        namespace,
        PLURAL,
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "PredictiveScaler",
            "metadata": {"name": "defaults"},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "maxReplicas": 4,
                "metric": {"resource": "cpu", "targetPerReplica": "250m"},
            },
        },
    )
    server = PredictiveScalerSpec.from_body(created["spec"])
    assumed = PredictiveScalerSpec.from_body(
        {k: created["spec"][k] for k in ("scaleTargetRef", "maxReplicas", "metric")}
    )
    assert server == assumed


def test_kubectl_get_shows_the_printer_columns(
    crd: str, local_cluster: local.LocalCluster, namespace: str
) -> None:
    kubectl(local_cluster, "apply", "-n", namespace, "-f", "-", stdin=json.dumps(VALID))
    table = kubectl(local_cluster, "get", "psc", "-n", namespace).splitlines()
    header = table[0].split()
    assert header == [
        "NAME", "TARGET", "MODE", "MIN", "MAX", "CURRENT", "DESIRED", "MODEL", "FORECAST",
        "READY", "AGE",
    ]  # fmt: skip
    row = table[1].split()
    assert row[:5] == ["valid", "web", "Auto", "1", "10"]
