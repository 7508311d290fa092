"""The chart installs the same CRDs as `crds/`, the API's single source of truth."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_charts_crds_are_exact_copies_of_crds() -> None:
    source = {p.name: p.read_bytes() for p in (REPO / "crds").glob("*.yaml")}
    chart = {
        p.name: p.read_bytes() for p in (REPO / "charts/predictive-scaler/crds").glob("*.yaml")
    }
    assert source, "no CRDs in crds/"
    assert chart.keys() == source.keys()
    differing = [name for name in source if chart[name] != source[name]]
    assert not differing, f"copy crds/{differing[0]} into charts/predictive-scaler/crds/"
