"""The dashboards refer only to metrics the operator exports and variables they define."""

from __future__ import annotations

import re

import pytest
from prometheus_client import REGISTRY

import predictive_scaler.operator.metrics  # noqa: F401 - registers the operator's metrics
from tests.fixtures.dashboards import boards, load, panel_queries, variables

GRAFANA_BUILTINS = {"__rate_interval", "__interval", "__range"}


def exported_names() -> set[str]:
    names = set()
    for family in REGISTRY.collect():
        names.add(family.name)
        names.update(sample.name for sample in family.samples)
        if family.type == "histogram":
            names.update(f"{family.name}_{suffix}" for suffix in ("bucket", "count", "sum"))
        if family.type == "counter":
            names.add(f"{family.name}_total")
    return names


@pytest.mark.parametrize("path", boards(), ids=lambda p: p.stem)
def test_every_metric_a_panel_uses_is_one_the_operator_exports(path: object) -> None:
    board = load(path)  # type: ignore[arg-type]
    known = exported_names()
    queries = panel_queries(board)
    assert queries
    for query in queries:
        used = set(re.findall(r"\b((?:predictive_scaler|process)_[a-z_]+)\b", query.expr))
        assert used, query
        assert used <= known, (query.panel, used - known)


@pytest.mark.parametrize("path", boards(), ids=lambda p: p.stem)
def test_panels_use_only_defined_variables_and_the_datasource_variable(path: object) -> None:
    board = load(path)  # type: ignore[arg-type]
    defined = {v["name"] for v in board["templating"]["list"]} | GRAFANA_BUILTINS
    assert "datasource" in defined
    variables(board)  # every query variable is a label_values() call
    ids = [panel["id"] for panel in board["panels"]]
    assert len(ids) == len(set(ids))
    for panel in board["panels"]:
        assert panel["datasource"]["uid"] == "${datasource}", panel["title"]
        for target in panel["targets"]:
            used = set(re.findall(r"\$\{?(\w+)", target["expr"]))
            assert used <= defined, (panel["title"], used - defined)


def test_the_autoscaling_dashboard_is_chosen_by_namespace_and_name() -> None:
    board = next(load(p) for p in boards() if p.stem == "autoscaling")
    assert [v.name for v in variables(board)] == ["namespace", "name"]
    for query in panel_queries(board):
        assert 'namespace="$namespace"' in query.expr, query.panel
        assert 'name="$name"' in query.expr, query.panel
