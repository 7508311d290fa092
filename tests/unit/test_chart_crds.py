"""The chart and the package (for the demo) ship the same CRDs as `crds/`, the single source."""

from __future__ import annotations

from pathlib import Path

import pytest

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
