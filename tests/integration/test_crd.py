"""The API server enforces the PredictiveScaler schema: bad objects are refused, field named."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

import predictive_scaler_dev.localcluster as local
from predictive_scaler.operator.resource import GROUP, PLURAL, VERSION, PredictiveScalerSpec
from tests.fixtures.hostile import REFUSED, VALID
from tests.fixtures.operator import kubectl

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_invalid_objects_are_refused_with_the_field_named(
    case: str, crd: str, custom_objects: client.CustomObjectsApi, namespace: str
) -> None:
    body, field = REFUSED[case]
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
        "OVERLOAD", "SAVED", "READY", "AGE",
    ]  # fmt: skip
    row = table[1].split()
    assert row[:5] == ["valid", "web", "Auto", "1", "10"]


@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.glob("*.yaml")))
def test_every_example_is_accepted_by_the_api_server(
    example: str, crd: str, local_cluster: local.LocalCluster, namespace: str
) -> None:
    applied = kubectl(
        local_cluster, "apply", "--dry-run=server", "-n", namespace, "-f", str(EXAMPLES / example)
    )
    assert "predictivescaler.autoscaling.predictive-scaler.io/" in applied, applied
