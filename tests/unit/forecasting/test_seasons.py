"""Seasons found in a long history: present when they are there, absent when they are not."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from predictive_scaler.forecasting.seasons import (
    DAY,
    WEEK,
    TimedSeries,
    _phase_medians,
    find_seasons,
    history_needed,
    learn_profile,
)

STEP = 300.0
TWO_WEEKS = int(2 * WEEK / STEP) + 1


def timed(values: np.ndarray, start: float = 0.0) -> TimedSeries:
    return TimedSeries(values, STEP, start + (values.size - 1) * STEP)


def daily_load(
    seed: int, points: int = TWO_WEEKS, noise: float = 3.0, swing: float = 5.0
) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(points) * STEP
    return np.asarray(10 + swing * np.sin(2 * np.pi * t / DAY) + rng.normal(0, noise, points))


def found(history: TimedSeries, held: tuple[float, ...] = ()) -> dict[float, bool]:
    return {finding.period_seconds: finding.present for finding in find_seasons(history, held=held)}


def test_a_season_found_before_stays_found_on_weaker_evidence_until_it_is_gone() -> None:
    # A daily swing of 1 in noise of 3: below what finds a season, above what keeps one.
    weak = timed(daily_load(7, swing=1.0))
    assert found(weak) == {DAY: False, WEEK: False}
    assert found(weak, held=(DAY,)) == {DAY: True, WEEK: False}
    # A load whose day is gone loses the season held before.
    for seed in range(8):
        noise = np.random.default_rng(seed).normal(10, 3, TWO_WEEKS)
        assert found(timed(noise), held=(DAY, WEEK)) == {DAY: False, WEEK: False}


@pytest.mark.parametrize("seed", range(6))
def test_noise_and_random_walks_have_no_season(seed: int) -> None:
    rng = np.random.default_rng(seed)
    noise = rng.normal(10, 1, TWO_WEEKS)
    walk = 100 + np.cumsum(rng.normal(0, 1, TWO_WEEKS))
    assert found(timed(noise)) == {DAY: False, WEEK: False}
    assert found(timed(walk)) == {DAY: False, WEEK: False}


@pytest.mark.parametrize("seed", range(4))
def test_a_daily_season_is_found_through_spikes_outages_and_gaps(seed: int) -> None:
    rng = np.random.default_rng(seed)
    load = daily_load(seed)
    spiky = load.copy()
    spiky[rng.integers(0, load.size, 20)] *= 30
    outage = load.copy()
    outage[1000:1300] = 0.0  # 25 h down
    gap = load.copy()
    gap[2000:2600] = np.nan  # 50 h unscraped
    for series in (load, spiky, outage, gap):
        assert found(timed(series)) == {DAY: True, WEEK: False}


def test_a_weekly_shape_is_found_beside_the_daily_one() -> None:
    t = np.arange(TWO_WEEKS) * STEP
    rng = np.random.default_rng(1)
    daily = 5 * np.sin(2 * np.pi * t / DAY)
    weekly = 4 * np.sin(2 * np.pi * t / WEEK)
    load = 20 + daily + weekly + rng.normal(0, 1, t.size)
    assert found(timed(load)) == {DAY: True, WEEK: True}


def test_fewer_than_two_cycles_find_nothing_and_say_how_many_there_are() -> None:
    load = daily_load(0, points=int(1.5 * DAY / STEP))
    day, week = find_seasons(timed(load))
    assert not day.present
    assert not week.present
    assert day.cycles == pytest.approx(1.5, abs=0.01)
    assert history_needed(DAY) == 2 * DAY


def test_a_stray_sample_days_before_the_rest_adds_no_cycles() -> None:
    # An old pod of the same name, or one brief scrape, 11 days before 46 h of load: the
    # history reaches back 46 h, not 11 days, so the daily season is not yet tested.
    load = np.full(TWO_WEEKS, np.nan)
    recent = daily_load(0, points=int(46 * 3600 / STEP))
    load[-recent.size :] = recent
    load[-int(11 * DAY / STEP)] = 10.0
    history = timed(load)
    assert history.observed_seconds == pytest.approx(recent.size * STEP)
    day, _ = find_seasons(history)
    assert not day.present
    assert day.cycles == pytest.approx(46 / 24, abs=0.01)


def test_an_outage_within_the_history_still_counts_as_spanned() -> None:
    load = daily_load(0)
    load[1000:2000] = np.nan  # 83 h unscraped in two weeks
    assert timed(load).observed_seconds == pytest.approx(load.size * STEP)


def test_a_load_defined_only_by_day_still_spans_its_history() -> None:
    # A latency quantile is NaN without traffic: 10 h a day of samples, for two weeks.
    load = daily_load(0)
    hours = (np.arange(load.size) * STEP / 3600) % 24
    load[(hours < 8) | (hours >= 18)] = np.nan
    assert timed(load).observed_seconds > 13 * DAY


def test_the_profile_lines_up_with_the_clock_at_any_step() -> None:
    start = 3 * DAY + 7 * STEP  # the window does not begin at phase zero
    t = start + np.arange(TWO_WEEKS) * STEP
    load = 10 + 5 * np.sin(2 * np.pi * t / DAY)
    profile = learn_profile(TimedSeries(load, STEP, t[-1]), [DAY])
    assert profile is not None
    # Read back at one-minute times, a day later than anything it was learnt on.
    minutes = t[-1] + 60.0 * np.arange(1, 600)
    expected = 5 * np.sin(2 * np.pi * minutes / DAY)
    np.testing.assert_allclose(profile.along(minutes), expected, atol=0.25)


@pytest.mark.parametrize("lag", [60.0, 120.0, -140.0])
def test_samples_placed_off_the_steps_grid_keep_their_place_in_the_profile(lag: float) -> None:
    # The operator places a rate over a 5-minute step where the recent window's rates
    # lie, minutes off the grid; rounding that back onto the grid ran the day late.
    start = 3 * DAY - lag
    t = start + np.arange(TWO_WEEKS) * STEP
    load = 10 + np.clip(20 * np.sin(2 * np.pi * t / DAY), -5, 5)  # steep ramps, flat tops
    profile = learn_profile(TimedSeries(load, STEP, t[-1]), [DAY])
    assert profile is not None
    assert profile.offset_seconds == pytest.approx(-lag)
    at = t[-1] - DAY + np.arange(0, DAY, 60.0)
    truth = np.clip(20 * np.sin(2 * np.pi * at / DAY), -5, 5)
    error = np.abs(profile.along(at) - truth)
    on_the_grid = np.abs(replace(profile, offset_seconds=0.0).along(at) - truth)
    assert error.mean() < 0.2 * on_the_grid.mean()


def test_a_profile_needs_usable_values() -> None:
    assert learn_profile(timed(np.full(10, np.nan)), [DAY]) is None
    assert learn_profile(timed(np.ones(10)), []) is None


@pytest.mark.parametrize("seed", range(8))
def test_each_phase_takes_the_median_of_its_observed_values(seed: int) -> None:
    rng = np.random.default_rng(seed)
    size = int(rng.integers(2, 300))
    values = np.round(rng.normal(0, 10, int(rng.integers(1, 4 * size))), 1)
    values[rng.random(values.size) < 0.4] = np.nan
    values[rng.random(values.size) < 0.05] = np.inf
    values[rng.random(values.size) < 0.05] = -np.inf
    phases = (np.arange(values.size) + int(rng.integers(0, 1000))) % size
    expected = np.array(
        [
            np.median(chunk[np.isfinite(chunk)]) if np.isfinite(chunk).any() else np.nan
            for chunk in (values[phases == phase] for phase in range(size))
        ]
    )
    medians = _phase_medians(values, phases.astype(np.int64), size)
    observed = np.isfinite(expected)
    if not observed.any():
        assert np.array_equal(medians, np.zeros(size))
        return
    assert np.array_equal(medians[observed], expected[observed])
    # A phase nobody observed lies between its observed neighbours around the cycle.
    known = np.flatnonzero(observed)
    assert np.allclose(
        medians[~observed],
        np.interp(np.flatnonzero(~observed), known, expected[known], period=size),
    )
