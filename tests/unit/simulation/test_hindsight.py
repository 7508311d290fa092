"""The hindsight reference: least squares of the load's own past, fitted on the slice it scores."""

from __future__ import annotations

import numpy as np
import pytest

from predictive_scaler.forecasting.calibration import MIN_ERRORS
from predictive_scaler.simulation.hindsight import hindsight_table

pytestmark = pytest.mark.unit


def test_it_learns_how_the_load_follows_its_past_and_calibrates_its_band() -> None:
    rng = np.random.default_rng(3)
    load = np.empty(6000)
    load[0] = 50.0
    for t in range(1, load.size):
        load[t] = 10.0 + 0.8 * load[t - 1] + rng.normal(0.0, 2.0)
    table = hindsight_table(load, start=100, horizon=2, level=0.9, step_seconds=60.0)
    decided = 100 + np.arange(load.size - 100)
    scored = slice(MIN_ERRORS + 2, -2)
    newest = load[decided[scored] - 1]
    # One step ahead is 10 + 0.8 y[t-1]; two steps ahead 18 + 0.64 y[t-1].
    # Off by the estimates' own noise only: an hour of lags fitted on 5,900 steps.
    assert np.mean(np.abs(table.mean[scored, 0] - (10.0 + 0.8 * newest))) < 0.4
    assert np.mean(np.abs(table.mean[scored, 1] - (18.0 + 0.64 * newest))) < 0.5
    actual = load[decided[scored]]
    inside = (table.lower[scored, 0] <= actual) & (actual <= table.upper[scored, 0])
    assert 0.86 <= inside.mean() <= 0.94


def test_it_reads_only_samples_before_the_decision() -> None:
    # Noise has no past to learn from: a forecast that saw its own step would not err.
    rng = np.random.default_rng(5)
    load = 100.0 + rng.normal(0.0, 5.0, 3000)
    table = hindsight_table(load, start=200, horizon=3, level=0.9, step_seconds=60.0)
    decided = 200 + np.arange(load.size - 200)
    for ahead in range(3):
        known = decided + ahead < load.size
        errors = load[decided[known] + ahead] - table.mean[known, ahead]
        assert np.nanstd(errors) > 0.9 * 5.0


def test_a_day_behind_it_reads_the_same_time_a_day_earlier() -> None:
    # Five-minute steps, a pattern repeated every day and nothing else to learn.
    rng = np.random.default_rng(11)
    day = rng.uniform(10.0, 90.0, 288)
    load = np.tile(day, 4)
    table = hindsight_table(load, start=72, horizon=2, level=0.9, step_seconds=300.0)
    decided = 72 + np.arange(load.size - 72)
    with_day = decided >= 288 + 5
    errors = np.abs(load[decided[with_day][:-1]] - table.mean[with_day][:-1, 0])
    assert np.nanmax(errors) < 1e-6
    # Without a day behind, the hour before says little about a random day.
    first = ~with_day & np.isfinite(table.mean[:, 0])
    assert np.nanmean(np.abs(load[decided[first]] - table.mean[first, 0])) > 5.0


def test_no_forecast_until_it_has_errors_to_calibrate_on() -> None:
    load = np.linspace(1.0, 10.0, 200) + np.sin(np.arange(200.0))
    table = hindsight_table(load, start=20, horizon=2, level=0.9, step_seconds=60.0)
    # Step two's first error is seen one row after step one's.
    assert np.isnan(table.mean[: MIN_ERRORS + 1]).all()
    assert np.isfinite(table.mean[MIN_ERRORS + 1 :]).all()
    with pytest.raises(ValueError, match="no forecast"):
        table.at(20, 2, 0.9)


def test_a_slice_with_no_step_to_score_is_refused() -> None:
    with pytest.raises(ValueError, match="starts at step 10"):
        hindsight_table(np.ones(10), start=10, horizon=1, level=0.9, step_seconds=60.0)
