"""Messy inputs: documented behaviour, finite non-negative outputs, only ValueError for no data."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from predictive_scaler.forecasting import MODEL_NAMES, clean_series, make_model
from predictive_scaler.forecasting.hygiene import MAX_LOAD, carried_forward, cleaning_notes

CHEAP_MODELS = ("naive", "seasonal_naive", "brown", "gm11", "grey_es")
EXPENSIVE_MODELS = tuple(name for name in MODEL_NAMES if name not in CHEAP_MODELS)

any_float = st.floats(allow_nan=True, allow_infinity=True, width=64)
messy_series = arrays(np.float64, st.integers(1, 80), elements=any_float).filter(
    lambda values: bool(np.isfinite(values).any())
)


def assert_valid(forecast_mean: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> None:
    for values in (forecast_mean, lower, upper):
        assert np.isfinite(values).all()
        assert (values >= 0).all()
        assert (values <= MAX_LOAD).all()
    assert (lower <= forecast_mean).all()
    assert (forecast_mean <= upper).all()


@pytest.mark.parametrize("name", CHEAP_MODELS)
@settings(max_examples=150)
@given(series=messy_series, horizon=st.integers(1, 30))
def test_cheap_models_survive_any_series(name: str, series: np.ndarray, horizon: int) -> None:
    forecast = make_model(name, season_length=4).fit(series).predict(horizon)
    assert_valid(forecast.mean, forecast.lower, forecast.upper)


@pytest.mark.parametrize("name", EXPENSIVE_MODELS)
@settings(max_examples=12)
@given(series=messy_series)
def test_expensive_models_survive_any_series(name: str, series: np.ndarray) -> None:
    params = {"n_origins": 2, "horizon": 2} if name == "auto" else {}
    forecast = make_model(name, **params).fit(series).predict(3)
    assert_valid(forecast.mean, forecast.lower, forecast.upper)


@pytest.mark.parametrize("name", MODEL_NAMES)
@pytest.mark.parametrize("empty", [[], np.array([np.nan, np.inf, -np.inf])])
def test_a_series_without_data_is_a_value_error(name: str, empty: list[float]) -> None:
    with pytest.raises(ValueError, match="cannot forecast"):
        make_model(name).fit(empty)


@pytest.mark.parametrize("name", MODEL_NAMES)
@pytest.mark.parametrize(
    "series",
    [[5.0], [0.0] * 50, [7.0] * 50, [1e300] * 40, list(np.linspace(0, 1e11, 60))],
    ids=["single", "zeros", "constant", "huge", "steep"],
)
def test_degenerate_series(name: str, series: list[float]) -> None:
    model = make_model(name).fit(series)
    forecast = model.predict(4)
    assert_valid(forecast.mean, forecast.lower, forecast.upper)
    if np.ptp(series) == 0.0:
        # To ARIMA's optimiser: about 5e-6 of the level where models fit it
        # (a huge load is fitted at a magnitude of 1-2, see numerics.load_unit).
        np.testing.assert_allclose(forecast.mean, min(series[0], MAX_LOAD), rtol=1e-5, atol=1e-6)


def test_too_short_a_series_falls_back_to_naive_and_says_why() -> None:
    model = make_model("holt").fit([4.0, 6.0, 5.0])
    assert model.is_degraded
    assert "needs 10" in (model.fallback_reason_ or "")
    forecast = model.predict(2)
    np.testing.assert_array_equal(forecast.mean, [5.0, 5.0])
    assert any("naive forecast used" in note for note in forecast.notes)


def test_clean_series_interpolates_gaps_and_clips() -> None:
    cleaned = clean_series([np.nan, 2.0, np.nan, 4.0, -3.0, np.inf, 1e40])
    np.testing.assert_array_equal(cleaned, [2.0, 2.0, 3.0, 4.0, 0.0, MAX_LOAD / 2, MAX_LOAD])


@pytest.mark.parametrize("name", ["naive", "holt", "arima"])
def test_a_load_in_a_large_unit_is_forecast_at_its_level(name: str) -> None:
    """Memory in bytes: 120 pods of 16 GiB hold 2e12; a clip at 1e12 capped the replicas."""
    rng = np.random.default_rng(5)
    level = 120 * 16 * 2.0**30
    series = level * (1 + 0.01 * rng.standard_normal(120))
    forecast = make_model(name).fit(series).predict(3)
    np.testing.assert_allclose(forecast.mean, level, rtol=0.05)


def test_clean_series_keeps_the_caller_array_untouched() -> None:
    raw = np.array([1.0, np.nan, -1.0])
    clean_series(raw)
    assert np.isnan(raw[1])
    assert raw[2] == -1.0


@given(series=messy_series)
def test_clean_series_is_finite_non_negative_and_keeps_length(series: np.ndarray) -> None:
    cleaned = clean_series(series)
    assert cleaned.shape == series.shape
    assert np.isfinite(cleaned).all()
    assert (cleaned >= 0).all()
    finite_in_range = np.isfinite(series) & (series >= 0) & (series <= MAX_LOAD)
    np.testing.assert_array_equal(cleaned[finite_in_range], series[finite_in_range])


def test_what_the_cleaning_changes_is_said_in_words() -> None:
    notes = cleaning_notes([np.nan, 2.0, -1.0, -4.0, np.inf, 1e40, 3.0])
    assert notes == [
        "2 of 7 values missing or infinite, filled from their neighbours",
        "2 of 7 values negative, read as 0",
        "1 of 7 values above 1e+30, read as 1e+30",
    ]
    assert cleaning_notes([1.0, 2.0]) == []


def test_carried_forward_fills_a_gap_from_before_it_however_long() -> None:
    nan = float("nan")
    values = np.array([nan, 1.0, nan, nan, nan, 5.0, nan])
    np.testing.assert_array_equal(carried_forward(values), [nan, 1.0, 1.0, 1.0, 1.0, 5.0, 5.0])
