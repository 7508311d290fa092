"""Querying the local Prometheus with a deadline, for `up`'s readiness check and the tests."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import requests
from prometheus_api_client.exceptions import PrometheusApiClientException

from predictive_scaler.promclient import Sample, instant_query


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
