"""Timeouts are told apart from an unreachable Prometheus, however urllib3 wraps them."""

from __future__ import annotations

import requests
from urllib3.exceptions import MaxRetryError, NewConnectionError, ReadTimeoutError

from predictive_scaler.operator.prometheus import _timed_out


def test_a_read_timeout_wrapped_by_a_client_without_retries_is_a_timeout() -> None:
    wrapped = MaxRetryError(None, "/api/v1/query_range", ReadTimeoutError(None, "/", "timed out"))  # type: ignore[arg-type]
    assert _timed_out(requests.ConnectionError(wrapped))
    assert _timed_out(requests.ReadTimeout())


def test_a_refused_connection_is_not_a_timeout() -> None:
    refused = NewConnectionError(None, "Connection refused")  # type: ignore[arg-type]
    assert not _timed_out(requests.ConnectionError(MaxRetryError(None, "/", refused)))  # type: ignore[arg-type]
    assert not _timed_out(requests.ConnectionError("no route"))
