"""The per-object history cache asks its metric source only for what it has not seen."""

from __future__ import annotations

import math

import numpy as np
import pytest

from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.operator.histories import REREAD_SAMPLES, CachedHistory
from predictive_scaler.operator.resource import MetricSpec, ScaleTargetRef
from predictive_scaler.operator.sources import LoadSeries, MetricsError

STEP = 60.0


def load(query: str) -> LoadSeries:
    target = ScaleTargetRef(api_version="apps/v1", kind="Deployment", name="web")
    metric = MetricSpec(query=query, target_per_replica="1")
    return LoadSeries.of("shop", target, metric, "app=web", 60.0)


class Grid:
    """A series whose value at time t is t / STEP, with the reads it was asked for."""

    def __init__(self) -> None:
        self.reads: list[tuple[float, float]] = []
        self.fail = False

    def samples(self, series: LoadSeries, *, step: float, start: float, end: float) -> FloatArray:
        if self.fail:
            raise MetricsError("Timeout", "no answer")
        self.reads.append((start, end))
        return np.arange(start, end + step / 2, step) / step


class LateGrid(Grid):
    """The grid, but its newest sample not yet served."""

    def samples(self, series: LoadSeries, *, step: float, start: float, end: float) -> FloatArray:
        return np.append(super().samples(series, step=step, start=start, end=end)[:-1], np.nan)


def test_the_first_read_fetches_the_whole_window_and_later_ones_only_new_samples() -> None:
    source, cache = Grid(), CachedHistory()
    first = cache.read(source, load("q"), step=STEP, points=100, now=6000.0 + 30)
    assert source.reads == [(6000.0 - 99 * STEP, 6000.0)]
    assert first.values[-1] == 100.0
    later = cache.read(source, load("q"), step=STEP, points=100, now=6000.0 + 3 * STEP + 5)
    assert source.reads[-1] == (6000.0 - (REREAD_SAMPLES - 1) * STEP, 6000.0 + 3 * STEP)
    assert cache.last_read_points == REREAD_SAMPLES + 3
    expected = np.arange(6000.0 - 96 * STEP, 6000.0 + 3 * STEP + 1, STEP) / STEP
    np.testing.assert_array_equal(later.values, expected)


def test_nothing_is_queried_while_no_new_sample_is_due() -> None:
    source, cache = Grid(), CachedHistory()
    cache.read(source, load("q"), step=STEP, points=10, now=600.0)
    cache.read(source, load("q"), step=STEP, points=10, now=600.0 + STEP - 1)
    assert len(source.reads) == 1


def test_a_newest_sample_still_missing_is_asked_for_again_within_its_step() -> None:
    # A backend that serves points late (remote write, a latency offset): the newest
    # sample was missing at the step's first read and is there at its second.
    source, cache = Grid(), CachedHistory()
    first = cache.read(LateGrid(), load("q"), step=STEP, points=10, now=600.0 + 5)
    assert math.isnan(first.values[-1])
    second = cache.read(source, load("q"), step=STEP, points=10, now=600.0 + 35)
    assert second.values[-1] == 10.0
    assert source.reads == [(600.0 - (REREAD_SAMPLES - 1) * STEP, 600.0)]
    # Once there, it is not asked for again within the step.
    cache.read(source, load("q"), step=STEP, points=10, now=600.0 + 55)
    assert len(source.reads) == 1


@pytest.mark.parametrize(
    ("query", "points", "now"),
    [("other", 10, 660.0), ("q", 20, 660.0), ("q", 10, 600.0 + 11 * STEP)],
    ids=["query changed", "window changed", "cache too old"],
)
def test_a_different_query_window_or_a_stale_cache_is_read_whole(
    query: str, points: int, now: float
) -> None:
    source, cache = Grid(), CachedHistory()
    cache.read(source, load("q"), step=STEP, points=10, now=600.0)
    history = cache.read(source, load(query), step=STEP, points=points, now=now)
    end = math.floor(now / STEP) * STEP
    assert source.reads[-1] == (end - (points - 1) * STEP, end)
    assert history.values.size == points


def test_a_failed_read_keeps_what_was_cached() -> None:
    source, cache = Grid(), CachedHistory()
    kept = cache.read(source, load("q"), step=STEP, points=10, now=600.0).values
    source.fail = True
    with pytest.raises(MetricsError):
        cache.read(source, load("q"), step=STEP, points=10, now=600.0 + 5 * STEP)
    np.testing.assert_array_equal(cache.values, kept)
    last = cache.last_read(load("q"), STEP)
    assert last is not None
    np.testing.assert_array_equal(last.values, kept)
    assert cache.last_read(load("other"), STEP) is None
    source.fail = False
    resumed = cache.read(source, load("q"), step=STEP, points=10, now=600.0 + 5 * STEP)
    np.testing.assert_array_equal(resumed.values, np.arange(6.0, 16.0))
