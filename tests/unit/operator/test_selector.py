"""A workload's label selector in the string form list calls take."""

from __future__ import annotations

from kubernetes import client

from predictive_scaler.operator.kube import selector_string


def test_labels_and_every_expression_operator() -> None:
    selector = client.V1LabelSelector(
        match_labels={"tier": "web", "app": "shop"},
        match_expressions=[
            client.V1LabelSelectorRequirement(key="zone", operator="In", values=["a", "b"]),
            client.V1LabelSelectorRequirement(key="track", operator="NotIn", values=["canary"]),
            client.V1LabelSelectorRequirement(key="managed", operator="Exists"),
            client.V1LabelSelectorRequirement(key="legacy", operator="DoesNotExist"),
        ],
    )
    assert selector_string(selector) == (
        "app=shop,tier=web,zone in (a,b),track notin (canary),managed,!legacy"
    )


def test_no_selector_selects_by_nothing() -> None:
    assert selector_string(None) == ""
    assert selector_string(client.V1LabelSelector()) == ""
