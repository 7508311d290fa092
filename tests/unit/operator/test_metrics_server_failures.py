"""metrics.k8s.io failures are named and counted, on real loopback sockets."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from kubernetes import client
from prometheus_client import REGISTRY

from predictive_scaler.operator.metrics_server import MetricsServerClient
from predictive_scaler.operator.sources import MetricsError

REASONS = ("Unreachable", "Timeout", "QueryFailed")


def failures() -> dict[str, float]:
    counted = {}
    for reason in REASONS:
        value = REGISTRY.get_sample_value(
            "predictive_scaler_metrics_api_failures_total", {"reason": reason}
        )
        assert value is not None, "every reason is exported from the start, at zero"
        counted[reason] = value
    return counted


def client_for(port: int, timeout: float) -> MetricsServerClient:
    configuration = client.Configuration()
    configuration.host = f"http://127.0.0.1:{port}"
    return MetricsServerClient(client.ApiClient(configuration), timeout)


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts connections (the kernel's backlog) but never answers."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        yield listener.getsockname()[1]


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@pytest.mark.parametrize(
    ("port", "timeout", "reason"),
    [("silent_port", 0.2, "Timeout"), ("closed_port", 5.0, "Unreachable")],
    ids=["never answers", "refuses the connection"],
)
def test_a_failed_request_is_named_and_counted_by_its_reason(
    port: str, timeout: float, reason: str, request: pytest.FixtureRequest
) -> None:
    before = failures()
    with pytest.raises(MetricsError) as raised:
        client_for(request.getfixturevalue(port), timeout=timeout).list("pods")
    assert raised.value.reason == reason
    assert failures() == {**before, reason: before[reason] + 1}
