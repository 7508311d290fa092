"""Timeouts told apart from an unreachable Prometheus, however urllib3 wraps them; clients kept."""

from __future__ import annotations

import threading

import requests
from urllib3.exceptions import MaxRetryError, NewConnectionError, ReadTimeoutError

from predictive_scaler.operator.prometheus import PrometheusSource, _timed_out


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
