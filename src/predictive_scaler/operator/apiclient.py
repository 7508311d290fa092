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
