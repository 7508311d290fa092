"""The Prometheus metric source: every PromQL the operator sends, each written once.

An object's load is a range query evaluated on a grid aligned to the step, so
that successive evaluations see the same timestamps; missing points become
NaN and the pure policy decides what too many of them mean. Node and pod
usage for the rebalancer are instant (and short range) queries of the
kubelet's resource metrics.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import re
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Self

import numpy as np
import requests
import urllib3
from prometheus_api_client import PrometheusConnect
from prometheus_api_client.exceptions import PrometheusApiClientException

from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.operator import metrics
from predictive_scaler.operator.query_cost import query_cost
from predictive_scaler.operator.query_scope import query_problem
from predictive_scaler.operator.resource import ScaleTargetRef
from predictive_scaler.operator.sources import (
    CPU,
    MEMORY,
    LoadSeries,
    MetricsError,
    Refusal,
    Usage,
)
from predictive_scaler.promclient import connect
from predictive_scaler.refs import PodRef

# Pod names each workload kind gives its pods: cAdvisor series carry the pod
# name, not the pod's labels, so the target's pods are matched by name (a
# history must include pods that have since gone, which no list of the pods
# that match the selector now can). Any other kind: its name, a dash and a
# suffix, the convention of controllers that make pods (an Argo Rollout's
# pods are <name>-<hash>-<random>); the metrics.k8s.io source picks pods by
# the target's selector instead.
POD_NAME_PATTERNS = {
    "Deployment": "{name}-[a-z0-9]{{1,10}}-[a-z0-9]{{5}}",
    "ReplicaSet": "{name}-[a-z0-9]{{5}}",
    "StatefulSet": "{name}-[0-9]+",
}
ANY_KIND_POD_NAMES = "{name}-[a-z0-9]([-a-z0-9]*[a-z0-9])?"


# Prometheus refuses a range query that would return more points per series.
MAX_POINTS_PER_QUERY = 11_000


def _promql_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def resource_query(
    resource: str | None, namespace: str, target: ScaleTargetRef, rate_window: float
) -> str:
    """PromQL for the built-in `cpu` (cores) or `memory` (working-set bytes) of the target."""
    pattern = POD_NAME_PATTERNS.get(target.kind, ANY_KIND_POD_NAMES)
    pod = pattern.format(name=re.escape(target.name))
    matchers = f'namespace={_promql_string(namespace)},pod=~{_promql_string(pod)},container!=""'
    if resource == "cpu":
        window = _window(rate_window)
        return f"sum(rate(container_cpu_usage_seconds_total{{{matchers}}}[{window}]))"
    return f"sum(container_memory_working_set_bytes{{{matchers}}})"


def load_query(series: LoadSeries) -> str:
    """The PromQL of an object's load: its own query, or the shorthand's."""
    if series.query is not None:
        return series.query
    return resource_query(series.resource, series.namespace, series.target, series.rate_window)


def _node_cpu(window: float) -> str:
    return f"sum by (node) (rate(node_cpu_usage_seconds_total[{_window(window)}]))"


def _pod_cpu(window: float) -> str:
    return (
        "sum by (namespace, pod) "
        f'(rate(container_cpu_usage_seconds_total{{container!=""}}[{_window(window)}]))'
    )


NODE_MEMORY = "sum by (node) (node_memory_working_set_bytes)"
POD_MEMORY = 'sum by (namespace, pod) (container_memory_working_set_bytes{container!=""})'


def measured_nodes(
    cpu: Mapping[str, float], memory: Mapping[str, float]
) -> dict[str, dict[str, float]]:
    """Each node's CPU and memory, of the nodes measured in both.

    A node lacking a metric that other nodes report is unmeasured, not idle in
    it (snapshot.node_infos leaves it out); a metric no node reports is 0 for all.
    """
    return {
        node: {CPU: cpu.get(node, 0.0), MEMORY: memory.get(node, 0.0)}
        for node in cpu.keys() | memory.keys()
        if (node in cpu or not cpu) and (node in memory or not memory)
    }


def _window(seconds: float) -> str:
    return f"{max(1, round(seconds))}s"


def prometheus_seconds(seconds: float) -> str:
    """A duration as Prometheus's HTTP API parses it: a plain decimal number of seconds.

    Its duration syntax has no fractions: ``9.995s`` is refused with 400, and
    an evaluation cuts the query timeout to what is left of its budget (9.995 s
    of the default 10), so with every default each query failed. A bare number
    is read as float seconds; ``3.6e+09`` in a unit would be refused too.
    """
    return f"{seconds:.3f}".rstrip("0").rstrip(".")


@dataclass(frozen=True)
class PrometheusSource:
    """The :class:`~predictive_scaler.operator.sources.MetricSource` that reads Prometheus.

    ``rate_window`` is the window of the rebalancer's usage rates (the
    shortest that spans enough scrapes).
    """

    url: str
    timeout: float
    rate_window: float = 60.0
    scrape_interval: float = 15.0
    # Samples of one series a tenant's query may read per range query (query_cost).
    max_samples: int = 10_000_000
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

    def with_timeout(self, seconds: float) -> Self:
        return dataclasses.replace(self, timeout=seconds)

    def refusal(self, series: LoadSeries, *, confine: bool, points: int) -> Refusal | None:
        if series.query is None:
            return None
        problem = query_problem(series.query, series.namespace, confine=confine)
        if problem is not None:
            return Refusal(problem.reason, problem.message)
        cost = query_cost(series.query, points, self.scrape_interval)
        if cost.samples <= self.max_samples:
            return None
        worst = f" (most of it in the subquery {cost.costliest})" if cost.costliest else ""
        return Refusal(
            "QueryTooExpensive",
            f"spec.metric.query reads about {cost.samples:.2g} samples of each series for "
            f"{points:,} points{worst}; the budget is {self.max_samples:,} "
            f"(PREDICTIVE_SCALER_QUERY_MAX_SAMPLES): shorten its ranges, widen its subquery "
            "steps, or read fewer points (spec.forecast.history, longHistory)",
        )

    def samples(self, series: LoadSeries, *, step: float, start: float, end: float) -> FloatArray:
        return self.query_samples(load_query(series), step=step, start=start, end=end)

    def query_samples(self, query: str, *, step: float, start: float, end: float) -> FloatArray:
        """`query` at every step from `start` to `end` (both on the step grid); NaN = missing.

        Prometheus answers at most 11,000 points per series and range query,
        so a longer window is read in as many queries as that takes. They share
        the one ``timeout`` (what is left of an evaluation's budget): each of
        them given all of it, a window of four queries could take four budgets.
        """
        points = round((end - start) / step) + 1
        values = np.full(points, np.nan)
        began = time.monotonic()
        for first in range(0, points, MAX_POINTS_PER_QUERY):
            last = min(points, first + MAX_POINTS_PER_QUERY) - 1
            chunk_start = start + first * step
            left = self.timeout - (time.monotonic() - began)
            if left <= 0.0:
                raise self._failed(
                    "Timeout",
                    f"Prometheus did not answer {points:,} points within {self.timeout:g} s",
                )
            source = self if first == 0 else self.with_timeout(left)
            for timestamp, raw in source._range(query, step, chunk_start, start + last * step):
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
        with self._request():
            series = self._client().custom_query_range(
                query,
                start_time=_utc(start),
                end_time=_utc(end),
                step=prometheus_seconds(step),
                params=self._server_timeout(),
                timeout=self.timeout,
            )
        if len(series) > 1:
            labels = ", ".join(str(s.get("metric", {})) for s in series[:3])
            raise self._failed(
                "MultipleSeries",
                f"the query returns {len(series)} series, it must return one (first: {labels})",
            )
        return [(float(t), float(v)) for t, v in (series[0]["values"] if series else ())]

    def _server_timeout(self) -> dict[str, str]:
        """Prometheus's own ``timeout``: it stops evaluating when this client gives up."""
        return {"timeout": prometheus_seconds(self.timeout)}

    @contextlib.contextmanager
    def _request(self) -> Iterator[None]:
        """Time one request and turn its failure into a MetricsError with a reason.

        The timeout is given with every request: a client kept from an earlier
        evaluation was made with another one.
        """
        began = time.monotonic()
        try:
            yield
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

    def usage(self) -> Usage:
        window = self.rate_window
        cpu, memory = (
            _by_node(self._instant(_node_cpu(window))),
            _by_node(self._instant(NODE_MEMORY)),
        )
        pod_cpu, pod_memory = (
            _by_pod(self._instant(_pod_cpu(window))),
            _by_pod(self._instant(POD_MEMORY)),
        )
        nodes = measured_nodes(cpu, memory)
        pods = {
            p: {CPU: pod_cpu.get(p, 0.0), MEMORY: pod_memory.get(p, 0.0)}
            for p in pod_cpu | pod_memory
        }
        return Usage(nodes, pods)

    def node_cpu_history(self, step: float, points: int) -> Mapping[str, Sequence[float]]:
        return {
            item["metric"].get("node", ""): _values(item)
            for item in self._recent_range(_node_cpu(self.rate_window), step, points)
        }

    def pod_cpu_history(self, step: float, points: int) -> Mapping[PodRef, Sequence[float]]:
        return {
            _pod(item["metric"]): _values(item)
            for item in self._recent_range(_pod_cpu(self.rate_window), step, points)
        }

    def _instant(self, query: str) -> list[dict[str, Any]]:
        with self._request():
            found: list[dict[str, Any]] = self._client().custom_query(
                query, params=self._server_timeout(), timeout=self.timeout
            )
        return found

    def _recent_range(self, query: str, step: float, points: int) -> list[dict[str, Any]]:
        end = time.time()
        with self._request():
            found: list[dict[str, Any]] = self._client().custom_query_range(
                query,
                start_time=_utc(end - (points - 1) * step),
                end_time=_utc(end),
                step=prometheus_seconds(step),
                params=self._server_timeout(),
                timeout=self.timeout,
            )
        return found

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


def _pod(labels: Mapping[str, str]) -> PodRef:
    return PodRef(labels.get("namespace", ""), labels.get("pod", ""))


def _by_node(found: list[dict[str, Any]]) -> dict[str, float]:
    return {item["metric"].get("node", ""): float(item["value"][1]) for item in found}


def _by_pod(found: list[dict[str, Any]]) -> dict[PodRef, float]:
    return {_pod(item["metric"]): float(item["value"][1]) for item in found}


def _values(item: Mapping[str, Any]) -> tuple[float, ...]:
    return tuple(float(value) for _, value in item["values"])
