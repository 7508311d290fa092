"""A tenant's PromQL is priced before it is sent: samples of each series one read reads."""

from __future__ import annotations

import pytest

from predictive_scaler.operator.prometheus import prometheus_seconds
from predictive_scaler.operator.query_cost import DEFAULT_SUBQUERY_STEP, query_cost

pytestmark = pytest.mark.unit

ATTACK = 'max_over_time(sum(rate(container_cpu_usage_seconds_total{namespace="a"}[8s]))[30d:10ms])'


def test_the_subquery_that_slowed_a_cluster_costs_hundreds_of_billions() -> None:
    cost = query_cost(ATTACK, points=361, scrape_interval=2.0)
    # 361 points x 259,200,000 subquery steps x 4 scrapes in each 8 s range.
    assert cost.samples == 361 * 259_200_000 * 4
    assert cost.costliest == "[30d:10ms]"


@pytest.mark.parametrize(
    ("query", "samples"),
    [
        ('sum(rate(http_requests_total{namespace="a"}[5m]))', 361 * 20),
        ("up", 361),
        # Both sides of an operator and an aggregation's parameter are read.
        ("sum(rate(a[1m])) / sum(rate(b[2m]))", 361 * 4 + 361 * 8),
        ("topk(3, rate(a[1m]))", 361 * 4),
        # A range shorter than a scrape still reads one sample.
        ("rate(a[5s])", 361),
    ],
)
def test_ordinary_queries_cost_what_their_ranges_read(query: str, samples: int) -> None:
    assert query_cost(query, points=361, scrape_interval=15.0).samples == samples


def test_a_subquery_without_a_step_runs_at_the_global_evaluation_interval() -> None:
    cost = query_cost("avg_over_time(up[1h:])", points=10, scrape_interval=15.0)
    assert cost.samples == 10 * round(3600 / DEFAULT_SUBQUERY_STEP)
    assert cost.costliest == "[1h:]"


@pytest.mark.parametrize(
    ("seconds", "sent"),
    [(60.0, "60"), (0.5, "0.5"), (9.995, "9.995"), (3_600_000_000.0, "3600000000")],
)
def test_durations_reach_prometheus_as_plain_seconds(seconds: float, sent: str) -> None:
    # f"{seconds:g}s" once sent 3.6e+09s, and "9.995s" has a fraction in a unit:
    # Prometheus refuses both (tests/integration/test_prometheus_source.py).
    assert prometheus_seconds(seconds) == sent
