"""The operator-load benchmark's past CPU: its sample grid, its counter, its names, its queries."""

from __future__ import annotations

import re

import numpy as np
import pytest

from benchmarks.load_history import (
    BASE_CORES,
    BLOCK_SECONDS,
    COARSE_EVERY,
    IDLE_TAIL,
    PastWindow,
    backfill_blocks,
    cpu_counter,
    fine_every,
    loaded_query,
    operator_view_query,
    past_load,
    past_pod,
    pod_matcher,
)
from predictive_scaler.operator.prometheus import POD_NAME_PATTERNS

ENDS_AT = 1_700_000_123.0


def test_the_grid_is_fine_over_the_recent_history_coarse_before_and_idle_after() -> None:
    window = PastWindow(ENDS_AT, span=86_400.0, fine_span=3_600.0, fine_every=30.0)
    times = window.times()
    assert np.all(np.diff(times) > 0)
    assert ENDS_AT in times  # the hand-over instant is a sample
    before = times[times <= ENDS_AT]
    assert before[0] >= ENDS_AT - 86_400.0
    assert before[0] < ENDS_AT - 86_400.0 + COARSE_EVERY
    recent = np.diff(before[before >= ENDS_AT - 3_600.0])
    assert recent == pytest.approx(np.full(recent.size, 30.0))
    assert np.diff(before[before <= ENDS_AT - 3_600.0]).max() == pytest.approx(COARSE_EVERY)
    assert times[-1] - ENDS_AT == pytest.approx(IDLE_TAIL)


def test_a_span_shorter_than_the_fine_part_is_all_fine() -> None:
    times = PastWindow(ENDS_AT, span=600.0, fine_span=3_600.0, fine_every=15.0).times()
    assert np.diff(times) == pytest.approx(np.full(times.size - 1, 15.0))
    assert times[0] == pytest.approx(ENDS_AT - 600.0)


def test_samples_come_every_half_step_but_never_faster_than_scrapes() -> None:
    assert fine_every(60.0, 2.0) == 30.0
    assert fine_every(5.0, 2.0) == 2.5
    assert fine_every(2.0, 2.0) == 2.0


def test_the_counter_integrates_the_cores_and_stops_at_the_end() -> None:
    times = np.array([0.0, 10.0, 30.0, 40.0, 50.0])
    cores = np.array([1.0, 0.5, 2.0, 3.0, 4.0])
    counter = cpu_counter(times, cores, ends_at=40.0)
    assert counter.tolist() == [0.0, 10.0, 20.0, 40.0, 40.0]


def test_every_deployment_gets_a_rising_counter_at_a_phase_of_its_own() -> None:
    window = PastWindow(ENDS_AT, span=2 * 86_400.0, fine_span=7_200.0, fine_every=30.0)
    load = past_load("ps-load", ["w-0000", "w-0001", "w-0002"], window, seed=1)
    assert load.counters.shape == (3, load.times.size)
    assert np.all(np.diff(load.counters, axis=1) >= 0)
    rates = np.diff(load.counters, axis=1) / np.diff(load.times)
    busy = load.times[1:] <= ENDS_AT
    # A day's mean is the base load; the three days differ (their phases do).
    assert rates[:, busy].mean(axis=1) == pytest.approx(np.full(3, BASE_CORES), rel=0.05)
    assert not np.allclose(rates[0, busy], rates[1, busy], atol=0.05)
    assert np.all(rates[:, ~busy] == 0)  # the idle tail
    again = past_load("ps-load", ["w-0000", "w-0001", "w-0002"], window, seed=1)
    assert np.array_equal(load.counters, again.counters)


def test_the_past_pod_matches_its_deployment_and_no_other() -> None:
    pod = past_pod("w-0001", ENDS_AT)
    assert re.fullmatch(r"w-0001-backfill-[0-9a-z]{5}", pod)
    deployment = POD_NAME_PATTERNS["Deployment"]
    assert re.fullmatch(deployment.format(name=re.escape("w-0001")), pod)
    assert not re.fullmatch(deployment.format(name=re.escape("w-0000")), pod)
    assert not re.fullmatch(deployment.format(name=re.escape("w-000")), pod)
    assert past_pod("w-0001", ENDS_AT + 1) != pod


def test_the_series_are_cut_at_block_boundaries_without_losing_a_sample() -> None:
    window = PastWindow(ENDS_AT, span=86_400.0, fine_span=7_200.0, fine_every=30.0)
    load = past_load("ps-load", ["w-0000", "w-0001"], window, seed=0)
    assert len(load.blocks()) in (13, 14)
    written = 0
    for block in sorted(load.blocks()):
        series = load.in_block(block)
        assert len(series) == 2
        first = [at for at, _ in series[0].samples]
        assert {int(at // BLOCK_SECONDS) for at in first} == {block}
        assert series[0].labels == load.labels("w-0000")
        assert series[0].kind == "counter"
        written += len(first)
    assert written == load.times.size
    assert load.in_block(min(load.blocks()) - 1) == []
    labels = load.labels("w-0001")
    assert labels["namespace"] == "ps-load"
    assert labels["container"] == "app"
    assert labels["job"] == "kwok-nodes"


def test_namespaces_share_each_block_so_that_no_two_blocks_overlap() -> None:
    cheap = past_load("ps-load", ["w-0000"], PastWindow(ENDS_AT, 86_400.0, 7_200.0, 30.0), seed=0)
    noisy = past_load(
        "ps-load-noisy", ["x-0000"], PastWindow(ENDS_AT + 30, 86_400.0, 3_600.0, 2.5), seed=1
    )
    blocks = list(backfill_blocks([cheap, noisy]))
    assert len(blocks) == len(cheap.blocks() | noisy.blocks())
    assert all(
        {s.labels["namespace"] for s in block} <= {"ps-load", "ps-load-noisy"} for block in blocks
    )
    assert (
        sum(len(s.samples) for block in blocks for s in block)
        == cheap.times.size + noisy.times.size
    )


def test_the_loaded_query_counts_complete_past_pods_at_the_end() -> None:
    window = PastWindow(ENDS_AT, span=3_600.0, fine_span=3_600.0, fine_every=30.0)
    load = past_load("ps-load", ["w-0000"], window, seed=0)
    query = loaded_query(load)
    assert query.startswith("count(count_over_time(container_cpu_usage_seconds_total{")
    assert f'pod=~".+-backfill-{past_pod("w", ENDS_AT)[-5:]}"' in query
    assert f"[3601s] @ {ENDS_AT:.3f}) >= 121)" in query


def test_the_operator_view_sums_each_deployments_pods_on_its_step_grid() -> None:
    query = operator_view_query(
        pod_matcher("ps-load", "w-"), step=60.0, history=21_600.0, rate_window=120.0, share=0.6
    )
    assert query == (
        "count(count_over_time((sum by (workload) (label_replace(rate("
        'container_cpu_usage_seconds_total{namespace="ps-load",pod=~"w-.+",container!=""}'
        '[120s]), "workload", "$1", "pod", "(.+)-[a-z0-9]{1,10}-[a-z0-9]{5}")))'
        "[21600s:60s]) >= 217)"
    )
    name = re.compile("(.+)-[a-z0-9]{1,10}-[a-z0-9]{5}")
    for pod in ("w-0001-7d9f8c6b5-x2kqz", past_pod("w-0001", ENDS_AT)):
        match = name.fullmatch(pod)
        assert match is not None
        assert match.group(1) == "w-0001"
