"""One CRD file, in the package; `crds/` and the chart's `crds/` link to it, they copy nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from predictive_scaler.forecasting import MODEL_NAMES

REPO = Path(__file__).resolve().parents[2]
SOURCE = REPO / "src/predictive_scaler/data/crds"
LINKS = ("crds", "charts/predictive-scaler/crds")


@pytest.mark.parametrize("place", LINKS)
def test_each_place_that_publishes_the_crds_links_to_the_packages_file(place: str) -> None:
    sources = sorted(SOURCE.glob("*.yaml"))
    assert sources, f"no CRDs in {SOURCE.relative_to(REPO)}"
    published = sorted((REPO / place).glob("*.yaml"))
    assert [p.name for p in published] == [p.name for p in sources]
    for path, source in zip(published, sources, strict=True):
        # A relative link inside the repository: it survives a clone and `.ci/run`'s copy.
        assert path.is_symlink(), f"{place}/{path.name} should link to {source}, not copy it"
        assert not Path(path.readlink()).is_absolute()
        assert path.resolve() == source.resolve()


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
    for path in SOURCE.glob("*.yaml"):
        crd = yaml.safe_load(path.read_text())
        for version in crd["spec"]["versions"]:
            schema = version["schema"]["openAPIV3Schema"]
            assert _unknown_keys(schema, version["name"]) == [], path.name


def test_the_models_the_crd_accepts_are_the_catalogs() -> None:
    # The enum is written by hand in the CRD; this keeps it in step with the registry.
    (path,) = SOURCE.glob("predictivescalers.*.yaml")
    crd = yaml.safe_load(path.read_text())
    for version in crd["spec"]["versions"]:
        spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
        models = spec["properties"]["forecast"]["properties"]["models"]
        assert sorted(models["items"]["enum"]) == sorted(MODEL_NAMES), version["name"]
        assert models["maxItems"] == len(MODEL_NAMES), version["name"]
