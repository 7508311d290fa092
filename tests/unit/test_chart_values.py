"""The chart's values.schema.json, checked as Helm checks it at install (JSON Schema draft 7)."""

from __future__ import annotations

import copy
import json
from typing import Any

import jsonschema
import pytest
import yaml

from tests.fixtures.chart import CHART

pytestmark = pytest.mark.unit

SCHEMA = json.loads((CHART / "values.schema.json").read_text())
DEFAULTS: dict[str, Any] = yaml.safe_load((CHART / "values.yaml").read_text())


def refusals(values: dict[str, Any]) -> list[str]:
    """Where the schema refuses ``values``, as dotted paths (what Helm's error names)."""
    validator = jsonschema.Draft7Validator(SCHEMA)
    return sorted(
        ".".join(str(part) for part in error.absolute_path) or "(top)"
        for error in validator.iter_errors(values)
    )


def test_the_schema_is_valid_draft_7_and_the_defaults_pass_it() -> None:
    jsonschema.Draft7Validator.check_schema(SCHEMA)
    assert refusals(DEFAULTS) == []


@pytest.mark.parametrize(
    ("path", "value", "named"),
    [
        # The operator refuses these at start-up (a period must be positive): the chart
        # refuses them at install instead.
        (("prometheus", "scrapeInterval"), "0", "prometheus.scrapeInterval"),
        (("prometheus", "queryTimeout"), "off", "prometheus.queryTimeout"),
        (("rebalance", "interval"), "0", "rebalance.interval"),
        (("metrics", "serviceMonitor", "interval"), "off", "metrics.serviceMonitor.interval"),
        (("prometheus", "url"), "prometheus:9090", "prometheus.url"),
        (("evaluationWorkers",), 0, "evaluationWorkers"),
        (("rebalance", "weights"), {"cpu": 1, "network": 1}, "rebalance.weights"),
        (("rebalance", "mode"), "auto", "rebalance.mode"),
        # A value renamed since (forecastWorkers is now evaluationWorkers) is not dropped.
        (("forecastWorkers",), 4, "(top)"),
    ],
)
def test_a_wrong_value_is_refused_naming_it(
    path: tuple[str, ...], value: object, named: str
) -> None:
    values = copy.deepcopy(DEFAULTS)
    parent = values
    for key in path[:-1]:
        parent = parent.setdefault(key, {})
    parent[path[-1]] = value
    assert refusals(values) == [named]


@pytest.mark.parametrize("value", ["off", "0", "10m"])
def test_what_may_be_off_may_be_off(value: str) -> None:
    values = copy.deepcopy(DEFAULTS)
    values["rebalance"]["lookahead"] = value
    values["rebalance"]["cooldown"] = value
    assert refusals(values) == []
