"""The ``metrics.k8s.io`` metric source: metrics-server's usage, with no Prometheus.

metrics-server answers what pods and nodes use now (CPU averaged over its
last window, memory working set), not what they used before. So this source
polls it in the background, every ``poll_seconds`` (metrics-server's own
resolution, 15 s by default), and records each answer on the step grids the
operator asks for: an object's load, each node's and each pod's CPU. A slot
holds the mean of the answers within its step, and histories are served from
that record, an answer standing in for the empty slots just after it (as
Prometheus's lookback does). The record starts empty when the operator starts: until half of
an object's ``history`` is recorded it holds its replicas
(``MissingMetrics``), so objects read this way want a short ``history``
(minutes); the long history, and so the seasons, fill just as slowly. Only
the ``resource:`` shorthand can be read: a PromQL ``query`` is refused with
a condition. Labels pick an object's pods, as its target's selector does.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Self

import numpy as np
from kubernetes import client

from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.forecasting.hygiene import carried_forward
from predictive_scaler.operator.metrics_server import Answer, MetricsServerClient, answer_of
from predictive_scaler.operator.recording import Recorder
from predictive_scaler.operator.resource import MAX_SYNC_SECONDS
from predictive_scaler.operator.shard import selector_matcher
from predictive_scaler.operator.sources import (
    CPU,
    LoadSeries,
    MetricsError,
    Refusal,
    Usage,
)
from predictive_scaler.refs import PodRef

log = logging.getLogger(__name__)

# metrics-server's default --metric-resolution: a faster poll reads the same answer.
DEFAULT_POLL_SECONDS = 15.0
# An object's load that has not been asked for this long is forgotten (a deleted
# object): two of the longest syncPeriod, so a live object's turn, even a late
# one, always finds its record. Nodes and pods as soon as a poll no longer lists them.
FORGET_AFTER_SECONDS = 2 * MAX_SYNC_SECONDS
# Polls that may fail in a row before reads say the record is stale.
STALE_AFTER_POLLS = 3
# How far an object's newest answer is carried into the slots after it, as
# Prometheus carries a sample forward within its lookback: by the time a slot
# is read its own answer may not be in yet, a poll and metrics-server's own
# resolution (by default a poll's length) late. Without it the newest slot of
# a short step is routinely empty and the load looks older than it is.
LOOKBACK_POLLS = 2


@dataclass(frozen=True)
class _Load:
    """An object's load as recorded: its pods and the resource (not the rate window)."""

    namespace: str
    pod_selector: str
    resource: str


@dataclass(frozen=True)
class _NodeCpu:
    name: str


@dataclass(frozen=True)
class _PodCpu:
    pod: PodRef


class MetricsApiSource:
    """The :class:`~predictive_scaler.operator.sources.MetricSource` that reads metrics.k8s.io.

    It polls :class:`MetricsServerClient` and keeps what each answer says on
    the step grids asked for; reads come from that record.
    """

    def __init__(
        self,
        api: client.ApiClient,
        timeout: float,
        *,
        poll_seconds: float = DEFAULT_POLL_SECONDS,
        clock: Callable[[], float] = time.time,
        background: bool = True,
    ) -> None:
        """``background`` False: no poller thread; whoever calls :meth:`poll` drives it."""
        self.client = MetricsServerClient(api, timeout)
        self.timeout = timeout
        self.poll_seconds = poll_seconds
        self.clock = clock
        self.recorder = Recorder()
        self._lock = threading.Lock()
        self._loads: dict[_Load, float] = {}  # each asked-for load, and when it was last asked
        self._answer: Answer | None = None
        self._failure: MetricsError | None = None
        self._background = background
        self._poller: threading.Thread | None = None
        self._stopped = threading.Event()

    def with_timeout(self, seconds: float) -> Self:
        # Reads come from the record; only the poller talks to the API.
        del seconds
        return self

    def refusal(self, series: LoadSeries, *, confine: bool, points: int) -> Refusal | None:
        del confine, points  # every read is of the object's own pods, from the record
        if series.resource is None:
            return Refusal(
                "UnsupportedMetric",
                "spec.metric.query needs Prometheus: this operator reads metrics.k8s.io "
                "(PREDICTIVE_SCALER_METRICS_SOURCE=metrics-api), which serves only "
                "resource: cpu and memory",
            )
        return None

    def samples(self, series: LoadSeries, *, step: float, start: float, end: float) -> FloatArray:
        resource = series.resource
        if resource is None or not series.pod_selector:
            raise MetricsError(
                "UnsupportedMetric",
                "metrics.k8s.io gives the usage of pods found by their target's selector, "
                "and the target has none",
            )
        now = self.clock()
        key = _Load(series.namespace, series.pod_selector, resource)
        with self._lock:
            known = key in self._loads
            self._loads[key] = now
        self.recorder.record_on(key, step=step, slots=round((end - start) / step) + 1, now=now)
        if not known and self._answer is not None:
            self._record_load(key, self._answer)  # the newest answer counts for a new object
        self._fresh_answer()
        recorded = self.recorder.history(key, step=step, start=start, end=end, now=now)
        return carried_forward(
            recorded, max(1, math.floor(LOOKBACK_POLLS * self.poll_seconds / step))
        )

    def usage(self) -> Usage:
        answer = self._fresh_answer()
        return Usage(answer.nodes, answer.pods)

    def node_cpu_history(self, step: float, points: int) -> Mapping[str, Sequence[float]]:
        return {
            key.name: values
            for key, values in self._histories(_NodeCpu, step, points).items()
            if isinstance(key, _NodeCpu)
        }

    def pod_cpu_history(self, step: float, points: int) -> Mapping[PodRef, Sequence[float]]:
        return {
            key.pod: values
            for key, values in self._histories(_PodCpu, step, points).items()
            if isinstance(key, _PodCpu)
        }

    def _histories(self, kind: type, step: float, points: int) -> dict[Hashable, tuple[float, ...]]:
        """Each node's or pod's recorded CPU, a step without an answer left out as PromQL does."""
        self._fresh_answer()
        now = self.clock()
        end = math.floor(now / step) * step
        start = end - (points - 1) * step
        found = self.recorder.histories(kind, step=step, start=start, end=end, now=now)
        return {
            key: tuple(float(v) for v in values[np.isfinite(values)])
            for key, values in found.items()
        }

    # ---- polling --------------------------------------------------------------

    def _fresh_answer(self) -> Answer:
        """The newest answer, polling first if there is none; MetricsError when it is stale."""
        if self._answer is None and self._background:
            self.poll()
        if self._poller is None and self._background:
            with self._lock:
                if self._poller is None:
                    self._poller = threading.Thread(
                        target=self._poll_forever, name="metrics-api", daemon=True
                    )
                    self._poller.start()
        answer, failure = self._answer, self._failure
        stale = self.clock() - answer.at if answer is not None else math.inf
        if answer is None or stale > STALE_AFTER_POLLS * self.poll_seconds + self.timeout:
            if failure is not None:
                raise failure
            since = "yet" if answer is None else f"for {stale:.0f} s"
            raise MetricsError("Stale", f"metrics.k8s.io has not answered {since}")
        return answer

    def _poll_forever(self) -> None:
        while not self._stopped.wait(self.poll_seconds):
            try:
                self.poll()
            except MetricsError as error:
                log.warning("polling metrics.k8s.io: %s", error)

    def stop(self) -> None:
        self._stopped.set()

    def poll(
        self, pods: list[dict[str, Any]] | None = None, nodes: list[dict[str, Any]] | None = None
    ) -> None:
        """Read every pod's and node's usage once and record it (items given: a test's)."""
        now = self.clock()
        try:
            answer = answer_of(
                self.client.list("pods") if pods is None else pods,
                self.client.list("nodes") if nodes is None else nodes,
                now,
            )
        except MetricsError as error:
            self._failure = error
            raise
        self._answer, self._failure = answer, None
        for name, usage in answer.nodes.items():
            self.recorder.add(_NodeCpu(name), answer.at, usage[CPU], now)
        for pod, usage in answer.pods.items():
            self.recorder.add(_PodCpu(pod), answer.at, usage[CPU], now)
        self.recorder.keep_only(_NodeCpu, (_NodeCpu(name) for name in answer.nodes))
        self.recorder.keep_only(_PodCpu, (_PodCpu(pod) for pod in answer.pods))
        with self._lock:
            for gone in [
                k for k, asked in self._loads.items() if now - asked > FORGET_AFTER_SECONDS
            ]:
                del self._loads[gone]
            loads = list(self._loads)
        self.recorder.keep_only(_Load, loads)
        for key in loads:
            self._record_load(key, answer)

    def _record_load(self, key: _Load, answer: Answer) -> None:
        """An object's load in ``answer``: its pods' usage summed; nothing if none reported."""
        matches = selector_matcher(key.pod_selector)
        used = [
            usage[key.resource]
            for pod, usage in answer.pods.items()
            if pod.namespace == key.namespace and matches(answer.labels.get(pod, {}))
        ]
        if used:
            self.recorder.add(key, answer.at, sum(used), answer.at)
