"""Timeouts told apart from an unreachable Prometheus, however urllib3 wraps them; clients kept."""

from __future__ import annotations

import http.server
import json
import threading
import time

import pytest
import requests
from urllib3.exceptions import MaxRetryError, NewConnectionError, ReadTimeoutError

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


class SlowPrometheus(http.server.BaseHTTPRequestHandler):
    """Answers every range query with an empty matrix, DELAY seconds late."""

    DELAY = 0.6

    def do_GET(self) -> None:
        time.sleep(self.DELAY)  # the latency under test, not synchronisation
        body = json.dumps({"status": "success", "data": {"resultType": "matrix", "result": []}})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_a_window_read_in_several_queries_shares_one_timeout() -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), SlowPrometheus)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        source = PrometheusSource(f"http://127.0.0.1:{server.server_address[1]}", 1.0)
        # Three queries of 0.6 s each: within 1 s apiece, but not together.
        with pytest.raises(MetricsError) as raised:
            source.query_samples("up", step=1.0, start=0.0, end=3 * MAX_POINTS_PER_QUERY - 1.0)
        assert raised.value.reason == "Timeout"
        # One query's worth is read whole.
        values = source.query_samples("up", step=1.0, start=0.0, end=100.0)
        assert values.size == 101
    finally:
        server.shutdown()
        server.server_close()
