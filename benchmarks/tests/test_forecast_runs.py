"""What every model is given at an origin: windows, origins and the MASE scale."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.forecast_runs import (
    COLD_START_DAYS,
    HORIZON,
    LONG_SECONDS,
    RECENT_SECONDS,
    TRACES,
    BoolArray,
    Workload,
    cold_start,
    histories_at,
    long_history,
    one_step_scale,
    origins_for,
    recent_window,
    spread_origins,
)


def minute_workload(days: float, observed: BoolArray | None = None) -> Workload:
    points = round(days * 1440)
    values = np.arange(points, dtype=np.float64) % 1440
    seen = np.ones(points, dtype=np.bool_) if observed is None else observed
    return Workload("test", values, seen, 60.0)


def test_long_history_is_five_minute_means_ending_at_the_origin() -> None:
    workload = minute_workload(1.0)
    origin = 1003  # not a multiple of five: bins still end at the origin
    long = long_history(workload, origin)
    assert long.step_seconds == 300.0
    assert long.values.size == origin // 5
    assert long.values[-1] == pytest.approx(np.mean(workload.values[origin - 5 : origin]))
    # Stamped at the bin's centre, on the trace's clock.
    assert long.end_time == pytest.approx((origin - 3) * 60.0)


def test_long_history_marks_bins_without_an_observed_point_missing() -> None:
    observed = np.ones(1440, dtype=np.bool_)
    observed[500:510] = False
    observed[512] = False
    workload = minute_workload(1.0, observed)
    long = long_history(workload, 1440)
    assert np.isnan(long.values[100])
    assert np.isnan(long.values[101])
    # A partly observed bin is the mean of what was observed.
    expected = np.mean(workload.values[[510, 511, 513, 514]])
    assert long.values[102] == pytest.approx(expected)


def test_long_history_stops_at_fourteen_days() -> None:
    workload = minute_workload(16.0)
    long = long_history(workload, workload.values.size)
    assert long.values.size * long.step_seconds == LONG_SECONDS


def test_recent_window_is_six_hours_at_the_trace_step() -> None:
    workload = minute_workload(1.0)
    recent = recent_window(workload, 1000)
    assert recent.values.size * 60.0 == RECENT_SECONDS
    assert recent.end_time == 999 * 60.0
    np.testing.assert_array_equal(recent.values, workload.values[640:1000])


def test_histories_find_the_daily_season_in_trace_steps() -> None:
    rng = np.random.default_rng(0)
    points = 14 * 1440
    day = 50.0 + 40.0 * np.sin(2 * np.pi * np.arange(points) / 1440)
    values = day + rng.normal(0.0, 2.0, points)
    workload = Workload("daily", values, np.ones(points, dtype=np.bool_), 60.0)
    histories = histories_at(workload, points)
    assert 1440 in histories.seasons
    assert histories.span.size == points
    assert histories.now == points * 60.0


def test_spread_origins_respects_the_first_origin_and_what_must_follow() -> None:
    observed = np.ones(100, dtype=np.bool_)
    observed[60] = False
    origins = spread_origins(observed, 10, 50, ahead=5, first=30)
    assert min(origins) >= 30
    assert max(origins) <= 95
    # Neither the history before nor the points after an origin may touch the gap.
    assert all(not (origin - 10 <= 60 < origin + 5) for origin in origins)


def test_one_step_scale_skips_pairs_with_an_unobserved_point() -> None:
    values = np.array([0.0, 1.0, 100.0, 101.0, 102.0])
    observed = np.array([True, True, False, True, True])
    assert one_step_scale(values, observed) == pytest.approx(1.0)
    assert one_step_scale(np.zeros(4), np.ones(4, dtype=np.bool_)) == 1.0


def test_a_cold_start_keeps_only_a_new_workloads_first_two_weeks() -> None:
    nasa, alibaba, _, google = TRACES
    workload = minute_workload(20.0)
    cut = cold_start(nasa, workload)
    assert cut is not None
    spec, young = cut
    first, last = COLD_START_DAYS
    assert spec.min_long_days == first
    assert young.values.size == round(last * 1440) + HORIZON
    origins = origins_for(spec, young, 40)
    assert len(origins) == 40
    assert min(origins) >= first * 1440
    # The last origin's horizon ends where the cut does: no origin sees day 14's end.
    assert max(origins) + HORIZON <= young.values.size
    # Traces without two weeks (Alibaba's 8 days, Google's 24 h VMs) have no such table.
    assert cold_start(alibaba, workload) is None
    assert cold_start(google, workload) is None
