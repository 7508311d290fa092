"""What a tenant's PromQL costs Prometheus, estimated before it is ever sent.

One object's query (``spec.metric.query``) runs once per history read, for
every point of the window. A range selector reads every scrape within its
range at every evaluation; a subquery evaluates its inner expression at
every step of its range, for every evaluation of its own. So
``max_over_time(sum(rate(x[8s]))[30d:10ms])`` over 361 points asks
Prometheus for about 3.7e11 samples of each series: one such object slowed a
whole cluster's queries (issue 23). The estimate below counts, per selected
series, the samples one range query reads; Prometheus's own limit
(``--query.max-samples``) counts them across series, server-wide.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import timedelta

import promql_parser

# A subquery without a step runs at Prometheus's global evaluation interval (1m by default).
DEFAULT_SUBQUERY_STEP = 60.0


@dataclass(frozen=True)
class QueryCost:
    """Samples of one series that one read reads, and the subquery that costs most."""

    samples: int
    costliest: str | None


def query_cost(query: str, points: int, scrape_interval: float) -> QueryCost:
    """The samples per selected series a range query of ``points`` points reads.

    ``query`` must parse (the scope check refuses it first when it does not).
    """
    costliest: list[tuple[float, str]] = []

    def cost(node: promql_parser.Expr, evaluations: float) -> float:
        if isinstance(node, promql_parser.MatrixSelector):
            return evaluations * max(1.0, _seconds(node.range) / scrape_interval)
        if isinstance(node, promql_parser.VectorSelector):
            return evaluations
        if isinstance(node, promql_parser.SubqueryExpr):
            step = _seconds(node.step) if node.step else DEFAULT_SUBQUERY_STEP
            inner = evaluations * math.ceil(_seconds(node.range) / max(step, 1e-3))
            spent = cost(node.expr, inner)
            costliest.append((spent, f"[{_words(node.range)}:{_words(node.step)}]"))
            return spent
        return sum(cost(child, evaluations) for child in _children(node))

    total = cost(promql_parser.parse(query), float(points))
    worst = max(costliest, default=None)
    return QueryCost(round(min(total, 1e18)), worst[1] if worst else None)


def _children(node: promql_parser.Expr) -> list[promql_parser.Expr]:
    """The expressions a function call, aggregation or operator evaluates (none for literals)."""
    if isinstance(node, promql_parser.Call):
        return list(node.args)
    if isinstance(node, promql_parser.AggregateExpr):
        return [node.expr] + ([node.param] if node.param is not None else [])
    if isinstance(node, promql_parser.BinaryExpr):
        return [node.lhs, node.rhs]
    if isinstance(node, promql_parser.ParenExpr | promql_parser.UnaryExpr):
        return [node.expr]
    return []


def _seconds(duration: timedelta | None) -> float:
    return 0.0 if duration is None else duration.total_seconds()


def _words(duration: timedelta | None) -> str:
    return "" if duration is None else promql_parser.display_duration(duration)
