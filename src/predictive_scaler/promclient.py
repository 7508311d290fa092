"""Instant Prometheus queries as plain samples, for the operator and the local cluster's checks."""

from __future__ import annotations

from dataclasses import dataclass

from prometheus_api_client import PrometheusConnect
from urllib3.util.retry import Retry


@dataclass(frozen=True)
class Sample:
    labels: dict[str, str]
    value: float


def connect(base_url: str, *, timeout: float = 5.0) -> PrometheusConnect:
    """A client without retries: every caller polls or retries on its own schedule."""
    return PrometheusConnect(url=base_url, retry=Retry(total=0), timeout=timeout)


def instant_query(base_url: str, promql: str, *, timeout: float = 5.0) -> list[Sample]:
    """One instant query of a vector; errors raise (the caller decides whether to retry)."""
    result = connect(base_url, timeout=timeout).custom_query(promql)
    return [Sample(dict(item["metric"]), float(item["value"][1])) for item in result]
