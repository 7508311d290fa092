"""An object's series are published only while it is served, and go when it is deleted."""

from __future__ import annotations

import pytest
from prometheus_client import REGISTRY

from predictive_scaler.operator import metrics
from predictive_scaler.operator.runtime import ObjectRuntime
from tests.unit.operator.test_evaluator import REF, FakeSource, FakeWorkloads, evaluate_with, spec

pytestmark = pytest.mark.unit


def series_of(namespace: str, name: str) -> list[str]:
    return [
        sample.name
        for family in REGISTRY.collect()
        for sample in family.samples
        if sample.labels.get("namespace") == namespace and sample.labels.get("name") == name
    ]


def test_an_evaluation_that_ends_after_its_object_was_deleted_publishes_nothing() -> None:
    token = metrics.start_object(REF.namespace, REF.name)
    runtime = ObjectRuntime(metrics_token=token)
    evaluate_with(FakeWorkloads(), FakeSource(level=2.0), spec(), runtime)
    assert "predictive_scaler_load" in series_of(REF.namespace, REF.name)
    # Deleted while a second evaluation runs: its figures must not come back.
    metrics.forget(REF.namespace, REF.name, token)
    assert series_of(REF.namespace, REF.name) == []
    evaluate_with(FakeWorkloads(), FakeSource(level=2.0), spec(), runtime)
    assert series_of(REF.namespace, REF.name) == []


def test_the_old_incarnations_cleanup_leaves_a_new_object_of_the_same_name_alone() -> None:
    old = metrics.start_object("team", "recreated")
    new = metrics.start_object("team", "recreated")
    with metrics.publishing("team", "recreated", new) as served:
        assert served
        metrics.LOAD.labels("team", "recreated").set(1.0)
    metrics.forget("team", "recreated", old)
    assert "predictive_scaler_load" in series_of("team", "recreated")
    with metrics.publishing("team", "recreated", old) as served:
        assert not served
    metrics.forget("team", "recreated", new)
    assert series_of("team", "recreated") == []
