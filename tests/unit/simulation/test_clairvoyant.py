"""The clairvoyant reference: the load's future course, calibrated on its own past errors."""

from __future__ import annotations

import numpy as np
import pytest

from predictive_scaler.forecasting.calibration import MIN_ERRORS
from predictive_scaler.simulation.forecasts import centred_mean, clairvoyant_table

pytestmark = pytest.mark.unit


def test_centred_mean_averages_the_observed_neighbours() -> None:
    load = np.array([1.0, 2.0, np.nan, 4.0, 5.0, np.nan, np.nan, np.nan])
    means = centred_mean(load, 3)
    np.testing.assert_allclose(means[:5], [1.5, 1.5, 3.0, 4.5, 4.5])
    assert means[5] == 5.0
    assert np.isnan(means[6])  # no observed sample within one step


def test_its_mean_is_the_future_course_and_its_band_the_noise_around_it() -> None:
    rng = np.random.default_rng(7)
    course = 50.0 + 20.0 * np.sin(np.arange(2000) / 100.0)
    load = course + rng.normal(0.0, 2.0, course.size)
    table = clairvoyant_table(load, start=400, horizon=3, level=0.9, step_seconds=60.0)
    smooth = centred_mean(load, 5)
    np.testing.assert_allclose(table.mean[100], smooth[500:503])
    # Noise around a 5-step mean of N(0, 2) noise has sd 2 * sqrt(4/5); its 90 % band
    # spans about +-1.645 of that: the band measures the noise, not the course.
    width = table.upper[:, 0] - table.lower[:, 0]
    assert np.median(width) == pytest.approx(2 * 1.645 * 2.0 * np.sqrt(0.8), rel=0.15)
    inside = (table.lower[:-3, 0] <= load[400:-3]) & (load[400:-3] <= table.upper[:-3, 0])
    assert 0.85 <= inside.mean() <= 0.95


def test_no_forecast_until_it_has_errors_to_calibrate_on() -> None:
    load = np.linspace(1.0, 10.0, 100)
    table = clairvoyant_table(load, start=1, horizon=2, level=0.9, step_seconds=60.0)
    assert np.isnan(table.mean[: MIN_ERRORS - 1]).all()
    assert np.isfinite(table.mean[MIN_ERRORS - 1 :]).all()
    with pytest.raises(ValueError, match="no forecast"):
        table.at(1, 2, 0.9)
