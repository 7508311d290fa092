"""Querying the local Prometheus with a deadline, for `up`'s readiness check and the tests."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import requests
from prometheus_api_client import PrometheusConnect
from prometheus_api_client.exceptions import PrometheusApiClientException
from urllib3.util.retry import Retry


@dataclass(frozen=True)
class Sample:
    labels: dict[str, str]
    value: float


def instant_query(base_url: str, promql: str, *, timeout: float = 5.0) -> list[Sample]:
    """One instant query of a vector; errors raise (the caller decides whether to retry)."""
    # No client-side retries: the callers poll with their own deadline.
    prometheus = PrometheusConnect(url=base_url, retry=Retry(total=0))
    result = prometheus.custom_query(promql, timeout=timeout)
    return [Sample(dict(item["metric"]), float(item["value"][1])) for item in result]


def query_until(
    base_url: str,
    promql: str,
    accept: Callable[[list[Sample]], bool],
    *,
    timeout: float,
    interval: float = 0.5,
) -> list[Sample]:
    """Repeat `promql` until `accept` approves the answer; at the deadline, show the last one."""
    deadline = time.monotonic() + timeout
    last: list[Sample] | str = "no answer yet"
    while True:
        try:
            samples = instant_query(base_url, promql)
            if accept(samples):
                return samples
            last = samples
        except (requests.RequestException, PrometheusApiClientException) as error:
            last = f"error: {error}"
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"{promql!r} not accepted within {timeout:.0f} s; last answer: {last}"
            )
        time.sleep(interval)


def finite(samples: list[Sample]) -> bool:
    return bool(samples) and all(math.isfinite(s.value) for s in samples)
