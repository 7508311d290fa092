"""Timeouts told apart from an unreachable Prometheus, however urllib3 wraps them; clients kept."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from types import SimpleNamespace

import pytest
import requests
from urllib3.exceptions import MaxRetryError, NewConnectionError, ReadTimeoutError

from predictive_scaler.operator import prometheus
from predictive_scaler.operator.prometheus import (
    MAX_POINTS_PER_QUERY,
    PrometheusSource,
    _timed_out,
)
from predictive_scaler.operator.sources import MetricsError


def test_a_read_timeout_wrapped_by_a_client_without_retries_is_a_timeout() -> None:
    wrapped = MaxRetryError(None, "/api/v1/query_range", ReadTimeoutError(None, "/", "timed out"))  # type: ignore[arg-type]
    assert _timed_out(requests.ConnectionError(wrapped))
    assert _timed_out(requests.ReadTimeout())


def test_a_refused_connection_is_not_a_timeout() -> None:
    refused = NewConnectionError(None, "Connection refused")  # type: ignore[arg-type]
    assert not _timed_out(requests.ConnectionError(MaxRetryError(None, "/", refused)))  # type: ignore[arg-type]
    assert not _timed_out(requests.ConnectionError("no route"))


def test_each_evaluation_thread_keeps_its_own_client_and_its_connections() -> None:
    source = PrometheusSource("http://127.0.0.1:9", 1.0)
    first = source._client()
    assert source._client() is first  # kept: its session's connections are reused
    other: list[object] = []
    thread = threading.Thread(target=lambda: other.append(source._client()))
    thread.start()
    thread.join()
    assert other[0] is not first  # a requests.Session is not shared across threads


@dataclass
class SlowRanges:
    """Range queries that each take 0.6 s on a clock of their own, and the timeout each got."""

    now: float = 0.0
    timeouts: list[float] = field(default_factory=list)

    def monotonic(self) -> float:
        return self.now

    def range(
        self, source: PrometheusSource, query: str, step: float, start: float, end: float
    ) -> list[tuple[float, float]]:
        self.timeouts.append(source.timeout)
        self.now += 0.6
        return []


def test_a_window_read_in_several_queries_shares_one_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    slow = SlowRanges()
    monkeypatch.setattr(prometheus, "time", SimpleNamespace(monotonic=slow.monotonic))

    def timed_range(
        source: PrometheusSource, query: str, step: float, start: float, end: float
    ) -> list[tuple[float, float]]:
        return slow.range(source, query, step, start, end)

    monkeypatch.setattr(PrometheusSource, "_range", timed_range)
    source = PrometheusSource("http://127.0.0.1:9", 1.0)
    # Three queries of 0.6 s each: within 1 s apiece, but not together.
    with pytest.raises(MetricsError) as raised:
        source.query_samples("up", step=1.0, start=0.0, end=3 * MAX_POINTS_PER_QUERY - 1.0)
    assert raised.value.reason == "Timeout"
    assert slow.timeouts == [1.0, pytest.approx(0.4)], "the second gets what the first left"
    # One query's worth is read whole.
    slow.timeouts.clear()
    values = source.query_samples("up", step=1.0, start=0.0, end=100.0)
    assert values.size == 101
    assert slow.timeouts == [1.0]
