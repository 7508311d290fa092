"""The hindsight reference: least squares of the load's own past, fitted on the trace."""

from __future__ import annotations

import numpy as np
import pytest

from predictive_scaler.forecasting.calibration import MIN_ERRORS
from predictive_scaler.simulation import hindsight
from predictive_scaler.simulation.forecasts import ForecastTable
from predictive_scaler.simulation.hindsight import hindsight_table

pytestmark = pytest.mark.unit

SIGMA = 5.0


def errors(load: np.ndarray, table: ForecastTable) -> np.ndarray:
    """actual - forecast for every row and step ahead (NaN where either is missing)."""
    steps = table.start + np.arange(table.mean.shape[0])[:, None] + np.arange(table.horizon)
    actual = np.where(steps < load.size, load[np.minimum(steps, load.size - 1)], np.nan)
    return np.asarray(actual - table.mean)


def noise(steps: int, seed: int = 5) -> np.ndarray:
    return 100.0 + np.random.default_rng(seed).normal(0.0, SIGMA, steps)


def test_it_learns_how_the_load_follows_its_past_and_calibrates_its_band() -> None:
    rng = np.random.default_rng(3)
    load = np.empty(6000)
    load[0] = 50.0
    for t in range(1, load.size):
        load[t] = 10.0 + 0.8 * load[t - 1] + rng.normal(0.0, 2.0)
    table = hindsight_table(load, start=100, horizon=2, level=0.9, step_seconds=60.0)
    decided = 100 + np.arange(load.size - 100)
    # Its first rows are calibrated already: the errors of the history's steps serve.
    assert np.isfinite(table.mean).all()
    newest = load[decided - 1]
    # One step ahead is 10 + 0.8 y[t-1], two steps 18 + 0.64 y[t-1], off by the estimates'
    # own noise only (an hour of lags fitted on 5,900 steps).
    assert np.mean(np.abs(table.mean[:, 0] - (10.0 + 0.8 * newest))) < 0.4
    assert np.mean(np.abs(table.mean[:, 1] - (18.0 + 0.64 * newest))) < 0.5
    actual = load[decided[:-1]]
    inside = (table.lower[:-1, 0] <= actual) & (actual <= table.upper[:-1, 0])
    assert 0.86 <= inside.mean() <= 0.94


@pytest.mark.parametrize(
    ("steps", "start", "step_seconds", "horizon", "gaps"),
    [
        (3000, 200, 60.0, 3, False),
        # Missing samples read as the newest before them, not interpolated from the next.
        (3000, 200, 60.0, 3, True),
        # A trace just over a day: too few rows with a day behind to fit the day's window.
        (1500, 360, 60.0, 2, False),
        # A few hours: fewer lags than an hour, or least squares would fit the noise.
        (450, 360, 60.0, 2, False),
        # Four days at 5 minutes: the day before is read, all of it before the decision.
        (1152, 72, 300.0, 2, False),
        # Two-hour steps: the day's window ends one step before the decision at 13 ahead.
        (720, 12, 7200.0, 13, False),
        # Hourly steps with 12 steps ahead: a day of 24 steps, one lag.
        (2000, 24, 3600.0, 12, False),
        # Five-minute steps, 12 ahead: the rows just short of a whole day behind.
        (1152, 72, 300.0, 12, False),
    ],
)
def test_it_reads_only_samples_before_the_decision(
    steps: int, start: int, step_seconds: float, horizon: int, gaps: bool
) -> None:
    # Noise has no past to learn from: a forecast that saw its target would not err.
    load = noise(steps)
    if gaps:
        load[1::2] = np.nan
    table = hindsight_table(
        load, start=start, horizon=horizon, level=0.9, step_seconds=step_seconds
    )
    missed = errors(load, table)
    for ahead, column in enumerate(missed.T):
        assert np.nanstd(column) > 0.85 * SIGMA, f"{ahead} steps ahead"
    # Nor is any row forecast exactly, as a fit with a coefficient per row would.
    forecast = np.isfinite(table.mean).all(axis=1)
    assert forecast.mean() > 0.9
    scored = forecast & np.isfinite(missed).any(axis=1)
    assert (np.nanmax(np.abs(missed[scored]), axis=1) > 1e-6).all()


def test_a_day_behind_too_few_rows_to_fit_it_is_not_read() -> None:
    # Just over a day of minutes: 55 rows have a day behind, for 72 coefficients, which
    # least squares would fit exactly, noise and all.
    load = noise(1500)
    table = hindsight_table(load, start=360, horizon=2, level=0.9, step_seconds=60.0)
    behind = 360 + np.arange(load.size - 360) >= 1440 + 5
    assert behind.sum() == 55
    assert np.nanstd(errors(load, table)[behind]) > 0.85 * SIGMA


def test_a_day_behind_it_reads_the_same_time_a_day_earlier() -> None:
    # Five-minute steps, a pattern repeated every day and nothing else to learn.
    day = np.random.default_rng(11).uniform(10.0, 90.0, 288)
    load = np.tile(day, 4)
    table = hindsight_table(load, start=72, horizon=2, level=0.9, step_seconds=300.0)
    decided = 72 + np.arange(load.size - 72)
    behind = decided >= 288 + 5
    missed = np.abs(errors(load, table))
    assert np.nanmax(missed[behind]) < 1e-6
    # Without a day behind, the hour before says little about a random day.
    assert np.nanmean(missed[~behind]) > 5.0


def test_a_window_reaching_the_decision_is_not_read() -> None:
    # Two-hour steps: a day is 12 steps. At 15 steps ahead the window around the horizon's
    # middle would end at the decision's own step, so the day is not read at all.
    pattern = np.random.default_rng(13).uniform(10.0, 90.0, 12)
    load = np.tile(pattern, 60)
    read = hindsight_table(load, start=12, horizon=13, level=0.9, step_seconds=7200.0)
    unread = hindsight_table(load, start=12, horizon=15, level=0.9, step_seconds=7200.0)
    assert np.nanmax(np.abs(errors(load, read)[20:])) < 1e-6
    assert np.nanmean(np.abs(errors(load, unread)[20:])) > 5.0


def test_no_forecast_until_it_has_errors_to_calibrate_on() -> None:
    load = np.linspace(1.0, 10.0, 200) + np.sin(np.arange(200.0))
    table = hindsight_table(load, start=20, horizon=2, level=0.9, step_seconds=60.0)
    # 17 lags (the most 200 steps fit); the decision at 20 + r has r + 2 whole forecasts
    # behind it, two errors each: MIN_ERRORS of them from the fourth row on.
    first = MIN_ERRORS // 2 - 2
    assert np.isnan(table.mean[:first]).all()
    assert np.isfinite(table.mean[first:]).all()
    with pytest.raises(ValueError, match="no forecast"):
        table.at(20, 2, 0.9)


def test_it_is_fitted_alike_in_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    load = noise(2000) + 30.0 * np.sin(np.arange(2000) / 40.0)
    whole = hindsight_table(load, start=100, horizon=3, level=0.9, step_seconds=60.0)
    # Chunks of fewer rows than the fit's 61 coefficients, and one of several.
    monkeypatch.setattr(hindsight, "CHUNK_ROWS", 7)
    chunked = hindsight_table(load, start=100, horizon=3, level=0.9, step_seconds=60.0)
    np.testing.assert_allclose(chunked.mean, whole.mean, rtol=1e-9)
    np.testing.assert_allclose(chunked.upper, whole.upper, rtol=1e-9)


def test_a_constant_load_is_forecast_as_itself() -> None:
    table = hindsight_table(np.full(500, 7.0), start=100, horizon=2, level=0.9, step_seconds=60.0)
    np.testing.assert_allclose(table.mean, 7.0)


@pytest.mark.parametrize(
    ("load", "start", "words"),
    [
        (np.ones(10), 10, "starts at step 10"),
        (np.ones(10), 0, "starts at step 0"),
        (np.ones(15), 5, "too few"),
        (np.full(100, np.nan), 10, "no finite sample"),
    ],
)
def test_what_it_cannot_fit_is_refused(load: np.ndarray, start: int, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        hindsight_table(load, start=start, horizon=1, level=0.9, step_seconds=60.0)
