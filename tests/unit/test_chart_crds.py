"""The chart and the package (for the demo) ship the same CRDs as `crds/`, the single source."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
COPIES = ("charts/predictive-scaler/crds", "src/predictive_scaler/data/crds")


@pytest.mark.parametrize("copy", COPIES)
def test_each_copy_of_the_crds_is_exact(copy: str) -> None:
    source = {p.name: p.read_bytes() for p in (REPO / "crds").glob("*.yaml")}
    copied = {p.name: p.read_bytes() for p in (REPO / copy).glob("*.yaml")}
    assert source, "no CRDs in crds/"
    assert copied.keys() == source.keys()
    differing = [name for name in source if copied[name] != source[name]]
    assert not differing, f"copy crds/{differing[0]} into {copy}/"


SCHEMA_KEYS = {
    "type", "description", "default", "properties", "items", "required", "enum", "pattern",
    "format", "maxLength", "minLength", "minimum", "maximum", "maxItems", "minItems",
    "additionalProperties", "nullable", "x-kubernetes-validations", "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys", "x-kubernetes-preserve-unknown-fields",
}  # fmt: skip


def _unknown_keys(node: object, path: str) -> list[str]:
    if not isinstance(node, dict):
        return [f"{path} is not a schema"]
    found = [f"{path}.{key}" for key in node if key not in SCHEMA_KEYS]
    for name, child in (node.get("properties") or {}).items():
        found += _unknown_keys(child, f"{path}.{name}")
    if isinstance(node.get("items"), dict):
        found += _unknown_keys(node["items"], f"{path}[]")
    if isinstance(node.get("additionalProperties"), dict):
        found += _unknown_keys(node["additionalProperties"], f"{path}{{}}")
    return found


def test_every_schema_node_uses_only_keys_kubectl_accepts() -> None:
    # A stray comma in a YAML flow mapping makes a key of half a description:
    # the API server's strict decoding (kubectl apply) then refuses the whole CRD.
    for path in (REPO / "crds").glob("*.yaml"):
        crd = yaml.safe_load(path.read_text())
        for version in crd["spec"]["versions"]:
            schema = version["schema"]["openAPIV3Schema"]
            assert _unknown_keys(schema, version["name"]) == [], path.name
