"""The Kubernetes client the operator's own code uses, counting every request it sends.

The count (`predictive_scaler_api_requests_total{verb,resource}`) is what the
load benchmark divides by objects and cycles, so a change that adds a request
per object shows up as a figure, not as a slower cluster months later.
"""

from __future__ import annotations

import urllib.parse
from typing import Any

from kubernetes import client

from predictive_scaler.operator import metrics


def resource_of(url: str) -> str:
    """`deployments/scale` for .../namespaces/ns/deployments/web/scale; `nodes` for .../nodes."""
    parts = [p for p in urllib.parse.urlsplit(url).path.split("/") if p]
    # /api/v1/... or /apis/<group>/<version>/...
    rest = parts[2:] if parts[:1] == ["api"] else parts[3:]
    if len(rest) > 2 and rest[0] == "namespaces":
        rest = rest[2:]
    if not rest:
        return "?"
    return f"{rest[0]}/{rest[2]}" if len(rest) > 2 else rest[0]


class CountingApiClient(client.ApiClient):
    def call_api(self, method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        metrics.API_REQUESTS.labels(method.upper(), resource_of(url)).inc()
        return super().call_api(method, url, *args, **kwargs)


# Threads beside the evaluation threads that may use the operator's client at once:
# the background pool (the rebalancer, the CRD check) and kopf's handler calls.
BESIDE_EVALUATIONS = 4


def operator_api_client(evaluation_workers: int) -> CountingApiClient:
    """The operator's client, keeping a connection alive for every thread that may use it.

    The kubernetes client pools cpu_count x 5 connections (10 on two cores).
    Past that, each request over the pool's size opens a connection and
    then discards it (urllib3: "Connection pool is full"), which the load
    benchmark's run with 16 evaluation threads did 2,905 times in ten
    minutes at 1,000 objects; with 4 threads, never.
    """
    configuration = client.Configuration.get_default_copy()
    configuration.connection_pool_maxsize = max(
        configuration.connection_pool_maxsize, evaluation_workers + BESIDE_EVALUATIONS
    )
    return CountingApiClient(configuration)
