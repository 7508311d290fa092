"""The metrics.k8s.io source: answers polled, recorded on step grids, served as histories."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from kubernetes import client

from predictive_scaler.forecasting.hygiene import carried_forward
from predictive_scaler.operator.metrics_api import (
    DEFAULT_POLL_SECONDS,
    FORGET_AFTER_SECONDS,
    MetricsApiSource,
    _Load,
)
from predictive_scaler.operator.recording import Grid, Recorder
from predictive_scaler.operator.resource import MAX_SYNC_SECONDS, MetricSpec, ScaleTargetRef
from predictive_scaler.operator.sources import LoadSeries, MetricsError
from predictive_scaler.refs import PodRef

pytestmark = pytest.mark.unit

WEB = _Load("shop", "app=web", "cpu")
TARGET = ScaleTargetRef(api_version="apps/v1", kind="Deployment", name="web")


def test_a_slot_holds_the_mean_of_what_arrived_within_its_step() -> None:
    grid = Grid(step=10.0, slots=6)
    for at, value in ((101.0, 1.0), (109.0, 3.0), (110.0, 5.0), (121.0, 7.0)):
        grid.add(at, value)
    # Slot 110 covers (100, 110], slot 130 covers (120, 130]; slot 120 saw nothing.
    np.testing.assert_array_equal(grid.read(100.0, 130.0), [np.nan, 3.0, np.nan, 7.0])


def test_only_the_last_slots_are_kept_and_a_grown_grid_keeps_them() -> None:
    grid = Grid(step=10.0, slots=3)
    for at in range(10, 70, 10):
        grid.add(float(at), float(at))
    np.testing.assert_array_equal(grid.read(10.0, 60.0), [np.nan] * 3 + [40.0, 50.0, 60.0])
    grid.add(5.0, 99.0)  # older than anything kept: ignored
    grown = grid.grown(5)
    np.testing.assert_array_equal(grown.read(20.0, 60.0), [np.nan, np.nan, 40.0, 50.0, 60.0])
    grown.add(80.0, 80.0)  # slot 70 stays empty
    np.testing.assert_array_equal(grown.read(40.0, 80.0), [40.0, 50.0, 60.0, np.nan, 80.0])


def test_an_answer_is_recorded_once_and_only_on_grids_asked_for() -> None:
    recorder = Recorder()
    recorder.add(WEB, 95.0, 2.0, now=100.0)  # no grid yet: nothing to record on
    recorder.record_on(WEB, step=10.0, slots=4, now=100.0)
    recorder.add(WEB, 105.0, 4.0, now=106.0)
    recorder.add(WEB, 105.0, 4.0, now=107.0)  # the same answer again: not twice
    recorder.add(WEB, 108.0, 6.0, now=109.0)
    history = recorder.history(WEB, step=10.0, start=80.0, end=110.0, now=110.0)
    np.testing.assert_array_equal(history, [np.nan, np.nan, np.nan, 5.0])


def test_an_answer_stands_for_the_empty_slots_after_it_within_the_lookback() -> None:
    nan = np.nan
    values = np.array([nan, 1.0, nan, nan, nan, 2.0, nan, 3.0, nan])
    np.testing.assert_array_equal(
        carried_forward(values, 2), [nan, 1.0, 1.0, 1.0, nan, 2.0, 2.0, 3.0, 3.0]
    )
    np.testing.assert_array_equal(carried_forward(np.full(3, nan), 2), [nan, nan, nan])


def test_a_short_step_reads_a_fresh_newest_sample_between_polls() -> None:
    """At a 15 s step, one poll per step: the slot being read has no answer yet."""
    stamp = 1_800_000_000.0  # 2027-01-15T08:00:00Z, when metrics-server measured
    source, clock = source_at(stamp + 12)
    source.poll([pod("web-a", 1.5, {"app": "web"})], [])
    clock.now = stamp + 16  # the next step began; metrics-server has nothing newer yet
    values = source.samples(series(), step=15.0, start=stamp - 45, end=stamp + 15)
    np.testing.assert_allclose(values, [np.nan, np.nan, np.nan, 1.5, 1.5], equal_nan=True)


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def pod(name: str, cores: float, labels: dict[str, str], namespace: str = "shop") -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "timestamp": "2027-01-15T08:00:00Z",
        "containers": [{"name": "c", "usage": {"cpu": f"{round(cores * 1e9)}n", "memory": "1Mi"}}],
    }


def node(name: str, cores: float) -> dict[str, Any]:
    return {"metadata": {"name": name}, "usage": {"cpu": f"{cores}", "memory": "1Gi"}}


def source_at(now: float) -> tuple[MetricsApiSource, Clock]:
    clock = Clock(now)
    api = client.ApiClient(client.Configuration())
    return MetricsApiSource(api, 1.0, clock=clock, background=False), clock


def series(selector: str = "app=web", **metric: Any) -> LoadSeries:
    spec = MetricSpec(**(metric or {"resource": "cpu"}), target_per_replica="1")
    return LoadSeries.of("shop", TARGET, spec, selector, 8.0)


def test_an_objects_load_is_its_own_pods_summed_at_every_poll() -> None:
    stamp = 1_800_000_000.0  # 2027-01-15T08:00:00Z
    source, clock = source_at(stamp + 5)
    pods = [
        pod("web-a", 0.5, {"app": "web"}),
        pod("web-b", 0.25, {"app": "web", "tier": "x"}),
        pod("other", 4.0, {"app": "other"}),
        pod("web-elsewhere", 8.0, {"app": "web"}, namespace="else"),
    ]
    source.poll(pods, [node("n1", 2.0)])
    asked = series()
    first = source.samples(asked, step=10.0, start=stamp - 30, end=stamp + 10)
    # A new object counts the newest answer at once (stamped when its pods were measured),
    # and it stands for the slot after it, whose own answer is not in yet.
    np.testing.assert_allclose(first, [np.nan, np.nan, np.nan, 0.75, 0.75], equal_nan=True)
    clock.now += DEFAULT_POLL_SECONDS
    later = [dict(p, timestamp="2027-01-15T08:00:15Z") for p in pods[:2]]
    source.poll(later, [node("n1", 2.0)])
    values = source.samples(asked, step=10.0, start=stamp - 30, end=stamp + 20)
    assert values[-1] == pytest.approx(0.75)
    usage = source.usage()
    assert usage.nodes["n1"]["cpu"] == pytest.approx(2.0)
    assert usage.pods[PodRef("shop", "web-a")]["cpu"] == pytest.approx(0.5)


def test_a_query_is_refused_and_a_stale_record_says_why() -> None:
    source, clock = source_at(1_000.0)
    refusal = source.refusal(series(query="up"), confine=True, points=361)
    assert refusal is not None
    assert refusal.reason == "UnsupportedMetric"
    assert "spec.metric.query needs Prometheus" in refusal.message
    assert source.refusal(series(), confine=True, points=361) is None
    with pytest.raises(MetricsError, match="has not answered"):
        source.usage()  # never polled
    source.poll([], [node("n1", 1.0)])
    assert source.usage().nodes
    clock.now += 10 * DEFAULT_POLL_SECONDS
    with pytest.raises(MetricsError) as stale:
        source.usage()
    assert stale.value.reason == "Stale"


def test_gone_pods_and_objects_no_longer_asked_for_are_forgotten() -> None:
    source, clock = source_at(1_000.0)
    source.poll([pod("web-a", 1.0, {"app": "web"})], [])
    source.samples(series(), step=10.0, start=900.0, end=1_000.0)
    source.pod_cpu_history(10.0, 5)  # a grid for every pod
    assert source.recorder.keys(_Load) == [WEB]
    clock.now += FORGET_AFTER_SECONDS + 1
    source.poll([pod("web-b", 1.0, {"app": "web"})], [])
    assert source.recorder.keys(_Load) == []
    assert set(source.pod_cpu_history(10.0, 5)) == {PodRef("shop", "web-b")}


def test_an_object_on_the_longest_sync_period_keeps_its_record_between_turns() -> None:
    source, clock = source_at(1_000.0)
    source.poll([pod("web-a", 1.0, {"app": "web"})], [])
    source.samples(series(), step=60.0, start=0.0, end=1_000.0)
    # Polls go on while the object waits an hour, and a late tenth more, for its next turn.
    for _ in range(int(1.1 * MAX_SYNC_SECONDS / 600)):
        clock.now += 600.0
        source.poll([pod("web-a", 1.0, {"app": "web"})], [])
    assert source.recorder.keys(_Load) == [WEB]
    end = clock.now
    recent = source.samples(series(), step=60.0, start=end - 1_200.0, end=end)
    assert np.isfinite(recent).sum() >= 2
