"""The operator's Prometheus queries as the real Prometheus parses them.

An evaluation cuts the query timeout to what is left of its budget: with both
at their default of 10 s that is 9.99... s on every query, and Prometheus's
duration syntax has no fractions, so "9.995s" was refused with 400 and an
operator at its defaults read no load at all. The tests' operators set a
shorter timeout, which hid it; these ask the real Prometheus directly.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

import predictive_scaler_dev.localcluster as local
from predictive_scaler.operator.prometheus import PrometheusSource


# Steps are whole seconds, as the CRD's pattern makes them: prometheus-api-client
# rounds a range's start and end to whole seconds, which moves a 2.5 s grid off
# the one asked for half the time.
@pytest.mark.parametrize(("timeout", "step"), [(9.995, 2.0), (10.0, 60.0), (0.75, 1.0)])
def test_a_range_is_read_with_fractional_timeouts(
    local_cluster: local.LocalCluster, timeout: float, step: float
) -> None:
    source = PrometheusSource(local_cluster.prometheus_url, timeout=60.0).with_timeout(timeout)
    end = float(np.floor(time.time() / step) * step)
    start = end - 10 * step
    values = source.query_samples("vector(1)", step=step, start=start, end=end)
    assert values.tolist() == [1.0] * 11


def test_an_instant_query_carries_a_fractional_timeout(local_cluster: local.LocalCluster) -> None:
    source = PrometheusSource(local_cluster.prometheus_url, timeout=9.995)
    # Node usage through the operator's own instant queries: no error is the point.
    usage = source.usage()
    assert usage.nodes, "Prometheus answered, but with no node's usage"
