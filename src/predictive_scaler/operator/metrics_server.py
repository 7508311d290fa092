"""metrics-server's API (metrics.k8s.io): one request for every pod's or node's usage, read.

Its requests go through a client of their own with urllib3's retries off
(the next poll is the retry), so a hung API costs one ``timeout``; what does
not answer is a :class:`MetricsError` naming why.
"""

from __future__ import annotations

import copy
import datetime
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import urllib3
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from predictive_scaler.operator import metrics
from predictive_scaler.operator.apiclient import CountingApiClient
from predictive_scaler.operator.resource import quantity
from predictive_scaler.operator.sources import CPU, MEMORY, MetricsError
from predictive_scaler.refs import PodRef

GROUP, VERSION = "metrics.k8s.io", "v1beta1"


def _time(item: Mapping[str, Any], default: float) -> float:
    stamp = item.get("timestamp")
    if not stamp:
        return default
    return datetime.datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).timestamp()


def _pod_usage(item: Mapping[str, Any]) -> dict[str, float]:
    total = {CPU: 0.0, MEMORY: 0.0}
    for container in item.get("containers") or []:
        usage = container.get("usage") or {}
        for resource in (CPU, MEMORY):
            if resource in usage:
                total[resource] += quantity(str(usage[resource]))
    return total


@dataclass(frozen=True)
class Answer:
    """One poll: when it ended, every pod's and node's usage, and each pod's labels."""

    at: float
    pods: Mapping[PodRef, Mapping[str, float]]
    labels: Mapping[PodRef, Mapping[str, str]]
    nodes: Mapping[str, Mapping[str, float]]


def answer_of(pods: list[dict[str, Any]], nodes: list[dict[str, Any]], now: float) -> Answer:
    """One poll's lists read into an :class:`Answer` taken at ``now``."""
    usage: dict[PodRef, Mapping[str, float]] = {}
    labels: dict[PodRef, Mapping[str, str]] = {}
    times = [now]
    for item in pods:
        meta = item.get("metadata") or {}
        pod = PodRef(str(meta.get("namespace", "")), str(meta.get("name", "")))
        usage[pod] = _pod_usage(item)
        labels[pod] = dict(meta.get("labels") or {})
        times.append(_time(item, now))
    by_node: dict[str, Mapping[str, float]] = {}
    for item in nodes:
        name = str((item.get("metadata") or {}).get("name", ""))
        used = item.get("usage") or {}
        by_node[name] = {r: quantity(str(used[r])) if r in used else 0.0 for r in (CPU, MEMORY)}
    # An answer is stamped when its newest pod was measured (never in the future).
    return Answer(min(now, max(times[1:], default=now)), usage, labels, by_node)


class MetricsServerClient:
    """Lists PodMetrics and NodeMetrics, each in one request bounded by ``timeout``."""

    def __init__(self, api: client.ApiClient, timeout: float) -> None:
        configuration = copy.deepcopy(api.configuration)
        configuration.retries = False
        self._api: client.ApiClient = CountingApiClient(configuration)
        self.timeout = timeout

    def list(self, plural: str) -> list[dict[str, Any]]:
        """Every PodMetrics or NodeMetrics; MetricsError when the API does not answer."""
        custom = client.CustomObjectsApi(self._api)
        try:
            answer: Any = custom.list_cluster_custom_object(
                GROUP, VERSION, plural, _request_timeout=self.timeout
            )
        except ApiException as error:
            unavailable = error.status in (0, 502, 503, 504) or error.status is None
            raise _failed(
                "Unreachable" if unavailable else "QueryFailed",
                f"metrics.k8s.io answered {error.status} {error.reason}",
            ) from error
        except urllib3.exceptions.HTTPError as error:
            # urllib3 files a refused connection (NewConnectionError) under its timeouts.
            timed_out = isinstance(error, urllib3.exceptions.TimeoutError) and not isinstance(
                error, urllib3.exceptions.NewConnectionError
            )
            raise _failed(
                "Timeout" if timed_out else "Unreachable",
                f"metrics.k8s.io did not answer within {self.timeout:g} s"
                if timed_out
                else f"metrics.k8s.io is unreachable: {error}",
            ) from error
        items: list[dict[str, Any]] = answer.get("items") or []
        return items


def _failed(reason: str, message: str) -> MetricsError:
    metrics.METRICS_API_FAILURES.labels(reason).inc()
    return MetricsError(reason, message)
