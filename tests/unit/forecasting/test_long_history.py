"""The forecaster with a long history: seasons used when found, said when missing, live bands."""

from __future__ import annotations

import numpy as np
import pytest

from predictive_scaler.forecasting import ModelPendingError, ScheduledSelection, refresh_model
from predictive_scaler.forecasting.backtest import first_origin
from predictive_scaler.forecasting.calibration import LiveErrors
from predictive_scaler.forecasting.known_seasons import season_knowledge
from predictive_scaler.forecasting.refresh_job import RefreshRequest, backtest_cut
from predictive_scaler.forecasting.seasons import DAY, WEEK, TimedSeries

MINUTE, LONG_STEP = 60.0, 300.0
RECENT = 360  # six hours of minutes


def daily_load(times: np.ndarray, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.asarray(
        100 + 60 * np.sin(2 * np.pi * times / DAY) + rng.normal(0, 4, times.size), dtype=float
    )


def histories(end: float, long_seconds: float) -> tuple[TimedSeries, TimedSeries]:
    recent_times = end - MINUTE * np.arange(RECENT - 1, -1, -1)
    long_times = end - LONG_STEP * np.arange(int(long_seconds / LONG_STEP), -1, -1)
    return (
        TimedSeries(daily_load(recent_times, 1), MINUTE, end),
        TimedSeries(daily_load(long_times, 2), LONG_STEP, end),
    )


def test_a_daily_season_in_the_long_history_is_found_and_used() -> None:
    # Two hours before the daily peak: a trend model runs on past the turn.
    end = 14 * DAY + 0.25 * DAY - 2 * 3600
    recent, long = histories(end, 14 * DAY)
    horizon = 240
    future = 100 + 60 * np.sin(2 * np.pi * (end + MINUTE * np.arange(1, horizon + 1)) / DAY)
    seasonal = ScheduledSelection("holt").forecast_series(recent, horizon, 0.9, end, long=long)
    plain = ScheduledSelection("holt").forecast_series(recent, horizon, 0.9, end)
    assert seasonal.model == "holt+season"
    seasonal_error = np.abs(seasonal.mean - future).mean()
    assert seasonal_error < 0.5 * np.abs(plain.mean - future).mean()


def test_the_seasons_found_are_held_by_the_next_selection() -> None:
    submitted: list[RefreshRequest] = []

    def keep(request: RefreshRequest, _deliver: object, _may_wait: float) -> None:
        submitted.append(request)

    end = 14 * DAY + 0.25 * DAY
    recent, long = histories(end, 14 * DAY)
    forecaster = ScheduledSelection("holt", refresh_seconds=600, submit=keep)
    with pytest.raises(ModelPendingError):
        forecaster.forecast_series(recent, 5, 0.9, end, long=long)
    assert submitted[0].seasons_held == ()
    forecaster.handover.deliver(refresh_model(submitted[0]))
    forecaster.forecast_series(recent, 5, 0.9, end + 60, long=long)
    forecaster.forecast_series(recent, 5, 0.9, end + 660, long=long)
    assert [r.seasons_held for r in submitted] == [(), (DAY,)]


def test_auto_reports_the_seasons_it_found() -> None:
    end = 14 * DAY + 0.25 * DAY
    recent, long = histories(end, 14 * DAY)
    forecaster = ScheduledSelection("auto", candidates=["naive", "holt"])
    forecaster.forecast_series(recent, 5, 0.9, end, long=long)
    assert forecaster.seasons is not None
    assert forecaster.seasons.seasons == (DAY,)
    assert forecaster.seasons.waiting_for is None
    assert forecaster.seasons.in_use
    assert forecaster.chosen is not None
    assert forecaster.chosen.endswith("+season")
    assert all(name.endswith("+season") for name in forecaster.backtest_errors)


def test_a_short_long_history_says_how_much_it_has_and_needs() -> None:
    end = 10 * DAY
    recent, seen = histories(end, 5 * 3600)
    # As the operator reads it: the whole window, missing where nothing was recorded yet.
    window = np.full(round(15 * DAY / LONG_STEP) + 1, np.nan)
    window[-seen.values.size :] = seen.values
    long = TimedSeries(window, LONG_STEP, end)
    forecaster = ScheduledSelection("holt")
    forecast = forecaster.forecast_series(recent, 5, 0.9, end, long=long)
    assert forecaster.seasons is not None
    assert forecaster.seasons.seasons == ()
    assert forecaster.seasons.waiting_for == DAY
    assert forecaster.seasons.history_seconds == pytest.approx(5 * 3600 + LONG_STEP)
    assert forecaster.seasons.needed_seconds == 2 * DAY
    assert forecast.model == "holt"  # it forecasts with what it has


def test_a_configured_season_is_used_without_being_searched() -> None:
    end = 3 * DAY
    recent, long = histories(end, 2.5 * DAY)
    forecaster = ScheduledSelection("holt", seasonality_seconds=DAY)
    forecaster.forecast_series(recent, 5, 0.9, end, long=long)
    assert forecaster.seasons is not None
    assert forecaster.seasons.seasons == (DAY,)
    assert forecaster.seasons.waiting_for == WEEK or forecaster.seasons.waiting_for is None


def test_live_errors_line_up_forecasts_with_their_actuals_on_the_clock() -> None:
    live = LiveErrors()
    live.record(np.array([1.0, 2.0]), last=10)
    live.observe(np.array([5.0, 7.0, 2.0]), last=11)  # step 12 not seen yet
    assert len(live) == 0
    live.observe(np.array([5.0, 7.0, 2.0, 2.0]), last=12)
    np.testing.assert_allclose(live.table(2), [[1.0, 0.0]])


def test_the_band_comes_from_live_errors_and_covers_about_its_level() -> None:
    rng = np.random.default_rng(5)
    load = 200 + np.cumsum(rng.normal(0, 2, 2000))
    forecaster = ScheduledSelection("brown", refresh_seconds=1e9)
    hits = []
    for t in range(RECENT, 1900):
        recent = TimedSeries(load[t - RECENT : t], MINUTE, (t - 1) * MINUTE)
        forecast = forecaster.forecast_series(recent, 1, 0.8, t * MINUTE)
        if t >= RECENT + 300:
            hits.append(forecast.lower[0] <= load[t] <= forecast.upper[0])
    assert len(forecaster.live_errors) > 100
    assert 0.74 <= np.mean(hits) <= 0.86


def test_a_longer_horizon_than_selected_for_selects_again() -> None:
    end = 3 * DAY
    recent, long = histories(end, 2.5 * DAY)
    forecaster = ScheduledSelection("auto", candidates=["naive", "holt"])
    forecaster.forecast_series(recent, 2, 0.9, end, long=long)
    assert forecaster.selection is not None
    assert forecaster.selection.horizon == 2
    forecaster.forecast_series(recent, 5, 0.9, end + MINUTE, long=long)
    assert forecaster.selection.horizon == 5


def test_a_long_history_that_arrives_after_the_selection_is_used_at_once() -> None:
    # The operator's first read of the long history failed: its seasons would otherwise
    # wait for the hourly refresh. Selected again once, not at every call after.
    end = 14 * DAY + 0.25 * DAY
    recent, long = histories(end, 14 * DAY)
    forecaster = ScheduledSelection("auto", candidates=["naive", "holt"])
    forecaster.forecast_series(recent, 5, 0.9, end)
    assert forecaster.fitted_at == end
    assert forecaster.seasons is None
    later, _ = histories(end + MINUTE, 14 * DAY)
    forecaster.forecast_series(later, 5, 0.9, end + MINUTE, long=long)
    assert forecaster.fitted_at == end + MINUTE
    assert forecaster.seasons is not None
    assert forecaster.seasons.seasons == (DAY,)
    next_minute, _ = histories(end + 2 * MINUTE, 14 * DAY)
    forecaster.forecast_series(next_minute, 5, 0.9, end + 2 * MINUTE, long=long)
    assert forecaster.fitted_at == end + MINUTE


def test_a_window_with_no_new_sample_gives_the_last_forecast_without_updating() -> None:
    # Evaluated every 30 s on a 1-minute clock: every other call repeats the window.
    rng = np.random.default_rng(3)
    load = 200 + np.cumsum(rng.normal(0, 2, 700))
    forecaster = ScheduledSelection("holt", refresh_seconds=1e9)
    for t in range(RECENT, RECENT + 30):
        recent = TimedSeries(load[t - RECENT : t], MINUTE, (t - 1) * MINUTE)
        first = forecaster.forecast_series(recent, 3, 0.9, t * MINUTE)
        fitted, errors = forecaster.fitted, len(forecaster.live_errors)
        assert fitted is not None
        state = fitted.y_
        again = forecaster.forecast_series(recent, 3, 0.9, t * MINUTE + 30.0)
        assert again is first
        assert forecaster.fitted is fitted  # not updated
        assert fitted.y_ is state
        assert len(forecaster.live_errors) == errors
    # Each step's forecast was scored once: 30 made, the last 3 still waiting for actuals.
    assert len(forecaster.live_errors) == 30 - 3


def test_a_revised_window_updates_and_its_forecast_replaces_the_last() -> None:
    rng = np.random.default_rng(4)
    load = 200 + np.cumsum(rng.normal(0, 2, 400))
    forecaster = ScheduledSelection("holt", refresh_seconds=1e9)
    recent = TimedSeries(load[:RECENT], MINUTE, (RECENT - 1) * MINUTE)
    first = forecaster.forecast_series(recent, 3, 0.9, RECENT * MINUTE)
    revised = load[:RECENT].copy()
    revised[-1] += 50.0  # the newest minute, counted in full
    recent = TimedSeries(revised, MINUTE, (RECENT - 1) * MINUTE)
    second = forecaster.forecast_series(recent, 3, 0.9, RECENT * MINUTE + 30.0)
    assert not np.array_equal(first.mean, second.mean)
    longer = forecaster.forecast_series(recent, 5, 0.9, RECENT * MINUTE + 40.0)
    assert longer.horizon == 5


def test_a_forecast_remade_at_the_same_step_is_scored_once() -> None:
    live = LiveErrors()
    live.record(np.array([1.0, 2.0]), last=10)
    live.record(np.array([3.0, 4.0]), last=10)  # remade: replaces the first
    live.observe(np.array([5.0, 7.0, 2.0, 2.0]), last=12)
    np.testing.assert_allclose(live.table(2), [[2.0 - 3.0, 2.0 - 4.0]])


def test_the_backtest_profile_knows_nothing_of_what_it_forecasts() -> None:
    """Long samples within a long step of the backtest's first origin, or after it, are unseen."""
    end = 14 * DAY + 0.25 * DAY
    recent, long = histories(end, 14 * DAY)
    offsets = np.arange(-recent.values.size + 1, 6, dtype=float)
    request = RefreshRequest(
        model="auto",
        candidates=None,
        season_length=None,
        seasonality_seconds=None,
        series=recent.values,
        step_times=end + MINUTE * offsets,
        horizon=5,
        now=end,
        long=long,
    )
    origin_time = float(request.step_times[first_origin(recent.values.size)])
    long_times = long.start_time + LONG_STEP * np.arange(long.values.size)
    unseen = long_times > origin_time - LONG_STEP
    assert unseen.sum() >= (recent.values.size // 2) * MINUTE / LONG_STEP
    cut = backtest_cut(request, LONG_STEP)

    def profile_with(values: np.ndarray) -> np.ndarray:
        _, profile = season_knowledge(TimedSeries(values, LONG_STEP, end), DAY, cut)
        assert profile is not None
        return profile.along(request.step_times)

    raised_unseen = np.where(unseen, long.values + 500.0, long.values)
    np.testing.assert_array_equal(profile_with(raised_unseen), profile_with(long.values))
    raised_seen = np.where(~unseen & (long_times > end - DAY), long.values + 500.0, long.values)
    assert not np.allclose(profile_with(raised_seen), profile_with(long.values))


def test_until_keeps_the_samples_taken_by_then() -> None:
    series = TimedSeries(np.arange(10.0), 60.0, 600.0)  # samples at 60 .. 600 s
    kept = series.until(300.0)
    assert kept.values.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert kept.end_time == 300.0
    assert series.until(10.0).values.size == 0
    assert series.until(9_999.0).values.size == 10


def test_a_window_too_short_to_backtest_still_forecasts_with_its_season() -> None:
    end = 14 * DAY + 0.25 * DAY
    _, long = histories(end, 14 * DAY)
    short = TimedSeries(daily_load(end - MINUTE * np.arange(5, -1, -1.0), 1), MINUTE, end)
    forecast = ScheduledSelection("holt").forecast_series(short, 2, 0.9, end, long=long)
    assert forecast.model == "holt+season"
    assert np.isfinite(forecast.mean).all()
