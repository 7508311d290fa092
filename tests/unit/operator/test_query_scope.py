"""A namespaced object's query reads only its own namespace, and malformed PromQL never runs."""

from __future__ import annotations

import pytest

from predictive_scaler.operator.query_scope import query_problem

NS = "shop"


@pytest.mark.parametrize(
    "query",
    [
        'sum(rate(http_requests_total{namespace="shop",service="web"}[2m]))',
        'sum(rate(a{namespace="shop"}[1m])) / sum(rate(b{namespace="shop"}[1m]))',
        'max_over_time(queue_depth{namespace="shop"}[5m:30s])',
        'label_replace(up{namespace="shop"}, "namespace", "other", "", "")',
        "vector(3)",  # no selector reads no series at all
    ],
)
def test_queries_confined_to_the_namespace_may_run(query: str) -> None:
    assert query_problem(query, NS) is None


@pytest.mark.parametrize(
    ("query", "unconfined"),
    [
        ("sum(rate(http_requests_total[2m]))", "http_requests_total"),
        ('rate(x{namespace="other"}[1m])', 'namespace="other"'),
        ('rate(x{namespace=~"shop|other"}[1m])', "shop|other"),
        ('rate(x{namespace!="shop"}[1m])', 'namespace!="shop"'),
        ('a{namespace="shop"} / on() group_left b', "b"),
        ('{__name__=~".+"}', "__name__"),
        ('sum(rate(x{namespace="shop"}[1m])) + sum(y{namespace="kube-system"})', "kube-system"),
    ],
)
def test_a_selector_outside_the_namespace_is_refused_and_named(query: str, unconfined: str) -> None:
    problem = query_problem(query, NS)
    assert problem is not None
    assert problem.reason == "QueryOutsideNamespace"
    assert 'namespace="shop"' in problem.message
    assert unconfined in problem.message


@pytest.mark.parametrize("query", ["sum(", "rate(x[5m]", "x{namespace=}", "", "1 +"])
def test_malformed_promql_is_refused_with_the_parsers_words(query: str) -> None:
    problem = query_problem(query, NS)
    assert problem is not None
    assert problem.reason == "InvalidQuery"
    assert problem.message.startswith("spec.metric.query does not parse: ")


def test_the_cluster_operator_may_allow_other_namespaces_but_never_malformed_queries() -> None:
    assert query_problem("sum(rate(ingress_requests_total[1m]))", NS, confine=False) is None
    problem = query_problem("sum(", NS, confine=False)
    assert problem is not None
    assert problem.reason == "InvalidQuery"
