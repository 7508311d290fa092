"""A namespaced object's PromQL may read only its own namespace's series.

A PredictiveScaler is namespaced, and whoever may create one in namespace A
must not learn the load of namespace B through its status, Events or
metrics, nor scale A's workload on B's traffic. So every vector selector in
``spec.metric.query`` must carry the exact matcher ``namespace="<own>"``;
since every value a query computes comes from its selectors, that confines
the whole query, whatever functions or label rewrites surround them. The
query is parsed by promql-parser (the Rust parser GreptimeDB uses, following
Prometheus's grammar), so a malformed query is refused before Prometheus
sees it. A cluster operator who wants shared series (say, an ingress
controller's request rate in another namespace) turns the rule off with
PREDICTIVE_SCALER_CROSS_NAMESPACE_QUERIES=true.
"""

from __future__ import annotations

from dataclasses import dataclass

import promql_parser

NAMESPACE_LABEL = "namespace"


@dataclass(frozen=True)
class QueryProblem:
    reason: str  # InvalidQuery | QueryOutsideNamespace
    message: str


def query_problem(query: str, namespace: str, *, confine: bool = True) -> QueryProblem | None:
    """Why ``query`` may not run for an object in ``namespace``, or None when it may."""
    try:
        expression = promql_parser.parse(query)
    except ValueError as error:
        return QueryProblem("InvalidQuery", f"spec.metric.query does not parse: {error}")
    if not confine:
        return None
    unconfined: list[str] = []

    def check(node: promql_parser.Expr) -> None:
        if isinstance(node, promql_parser.VectorSelector) and not _pinned(node, namespace):
            unconfined.append(str(node))

    promql_parser.walk(expression, check)
    if unconfined:
        return QueryProblem(
            "QueryOutsideNamespace",
            f'spec.metric.query: every selector needs {NAMESPACE_LABEL}="{namespace}" '
            f"(this object's namespace); not confined: {', '.join(unconfined[:3])}",
        )
    return None


def _pinned(selector: promql_parser.VectorSelector, namespace: str) -> bool:
    return any(
        matcher.name == NAMESPACE_LABEL
        and matcher.op == promql_parser.MatchOp.Equal
        and matcher.value == namespace
        for matcher in selector.matchers.matchers
    )
