"""The operator's Kubernetes client keeps a connection for every thread that may use it."""

from __future__ import annotations

import multiprocessing

import pytest

from predictive_scaler.operator.apiclient import (
    BESIDE_EVALUATIONS,
    CountingApiClient,
    operator_api_client,
)


def pool_size(api: CountingApiClient) -> int:
    size: int = api.rest_client.pool_manager.connection_pool_kw["maxsize"]
    return size


@pytest.mark.parametrize("workers", [1, 4, 16, 64])
def test_the_pool_holds_every_evaluation_thread_and_the_others(workers: int) -> None:
    api = operator_api_client(workers)
    assert pool_size(api) >= workers + BESIDE_EVALUATIONS
    # Never smaller than the client's own default.
    assert pool_size(api) >= multiprocessing.cpu_count() * 5
