"""Adapter to Prometheus: a workload's load history as a regular series of samples.

The range query is evaluated on a grid aligned to the step, so that successive
evaluations see the same timestamps; missing points become NaN and the pure
policy decides what too many of them mean.
"""

from __future__ import annotations

import datetime
import re
import threading
import time
from dataclasses import dataclass, field

import numpy as np
import requests
import urllib3
from prometheus_api_client import PrometheusConnect
from prometheus_api_client.exceptions import PrometheusApiClientException

from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.operator import metrics
from predictive_scaler.operator.resource import MetricSource, ScaleTargetRef
from predictive_scaler.promclient import connect

# Pod names each workload kind gives its pods: cAdvisor series carry the pod
# name, not the pod's labels, so the target's pods are matched by name.
POD_NAME_PATTERNS = {
    "Deployment": "{name}-[a-z0-9]{{1,10}}-[a-z0-9]{{5}}",
    "ReplicaSet": "{name}-[a-z0-9]{{5}}",
    "StatefulSet": "{name}-[0-9]+",
}


# Prometheus refuses a range query that would return more points per series.
MAX_POINTS_PER_QUERY = 11_000


class MetricsError(RuntimeError):
    """The load could not be read; `reason` is the condition reason to report."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def _promql_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def resource_query(
    metric: MetricSource, namespace: str, target: ScaleTargetRef, rate_window: float
) -> str:
    """PromQL for the built-in `cpu` (cores) or `memory` (working-set bytes) of the target."""
    pod = POD_NAME_PATTERNS[target.kind].format(name=re.escape(target.name))
    matchers = f'namespace={_promql_string(namespace)},pod=~{_promql_string(pod)},container!=""'
    if metric.resource == "cpu":
        window = f"{max(1, round(rate_window))}s"
        return f"sum(rate(container_cpu_usage_seconds_total{{{matchers}}}[{window}]))"
    return f"sum(container_memory_working_set_bytes{{{matchers}}})"


def load_query(
    metric: MetricSource, namespace: str, target: ScaleTargetRef, rate_window: float
) -> str:
    if metric.query is not None:
        return metric.query
    return resource_query(metric, namespace, target, rate_window)


@dataclass(frozen=True)
class PrometheusSource:
    url: str
    timeout: float
    # One client, and so one requests.Session and its kept-alive connections,
    # per evaluation thread (a Session is not meant to be shared across
    # threads): at 1,000 objects a new connection per query was about 4 % of the
    # operator interpreter's samples (py-spy, issue 18).
    _clients: threading.local = field(default_factory=threading.local, compare=False)

    def _client(self) -> PrometheusConnect:
        found: PrometheusConnect | None = getattr(self._clients, "client", None)
        if found is None:
            # No retries inside one evaluation: the next evaluation is the retry.
            found = self._clients.client = connect(self.url, timeout=self.timeout)
        return found

    def samples(self, query: str, *, step: float, start: float, end: float) -> FloatArray:
        """`query` at every step from `start` to `end` (both on the step grid); NaN = missing.

        Prometheus answers at most 11,000 points per series and range query,
        so a longer window is read in as many queries as that takes.
        """
        points = round((end - start) / step) + 1
        values = np.full(points, np.nan)
        for first in range(0, points, MAX_POINTS_PER_QUERY):
            last = min(points, first + MAX_POINTS_PER_QUERY) - 1
            chunk_start = start + first * step
            for timestamp, raw in self._range(query, step, chunk_start, start + last * step):
                index = round((timestamp - start) / step)
                if first <= index <= last:
                    values[index] = raw
        # NaN and ±Inf samples count as missing; the policy holds when too many are.
        values[~np.isfinite(values)] = np.nan
        return values

    def _range(
        self, query: str, step: float, start: float, end: float
    ) -> list[tuple[float, float]]:
        """One range query's (timestamp, value) pairs; MetricsError unless one series or none."""
        began = time.monotonic()
        try:
            series = self._client().custom_query_range(
                query, start_time=_utc(start), end_time=_utc(end), step=f"{step:g}s"
            )
        except requests.RequestException as error:
            if _timed_out(error):
                raise self._failed(
                    "Timeout", f"Prometheus did not answer within {self.timeout:g} s"
                ) from error
            raise self._failed(
                "Unreachable", f"Prometheus at {self.url} is unreachable: {error}"
            ) from error
        except PrometheusApiClientException as error:
            raise self._failed("QueryFailed", f"Prometheus refused the query: {error}") from error
        finally:
            metrics.QUERY_SECONDS.observe(time.monotonic() - began)
        if len(series) > 1:
            labels = ", ".join(str(s.get("metric", {})) for s in series[:3])
            raise self._failed(
                "MultipleSeries",
                f"the query returns {len(series)} series, it must return one (first: {labels})",
            )
        return [(float(t), float(v)) for t, v in (series[0]["values"] if series else ())]

    @staticmethod
    def _failed(reason: str, message: str) -> MetricsError:
        metrics.QUERY_FAILURES.labels(reason).inc()
        return MetricsError(reason, message)


def _timed_out(error: requests.RequestException) -> bool:
    """A timeout, also when urllib3 (retries off) wraps it in a MaxRetryError -> ConnectionError."""
    if isinstance(error, requests.Timeout):
        return True
    reason = getattr(error.args[0], "reason", None) if error.args else None
    # urllib3 files a refused connection (NewConnectionError) under ConnectTimeoutError.
    if isinstance(reason, urllib3.exceptions.NewConnectionError):
        return False
    return isinstance(reason, TimeoutError | urllib3.exceptions.TimeoutError)


def _utc(epoch: float) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(epoch, tz=datetime.UTC)
