"""STL deseasonalisation around any model."""

from __future__ import annotations

import numpy as np
import pytest

from predictive_scaler.forecasting import Auto, make_model
from predictive_scaler.forecasting.seasonal import Deseasonalized
from tests.conftest import seasonal_load

SEASON = 24


def mae_over_next_season(name: str, y: np.ndarray, future: np.ndarray) -> float:
    forecast = make_model(name, season_length=SEASON).fit(y).predict(SEASON)
    return float(np.mean(np.abs(forecast.mean - future)))


@pytest.mark.parametrize("base", ["naive", "holt", "arima"])
def test_deseasonalising_beats_the_plain_model_on_a_seasonal_series(base: str) -> None:
    series = seasonal_load(24 * 10 + SEASON)
    history, future = series[:-SEASON], series[-SEASON:]
    plain = mae_over_next_season(base, history, future)
    seasonal = mae_over_next_season(base + "+stl", history, future)
    assert seasonal < plain * 0.6


def test_the_wrapped_model_names_itself() -> None:
    model = make_model("holt+stl", season_length=SEASON)
    assert isinstance(model, Deseasonalized)
    assert model.fit(seasonal_load(100)).predict(2).model == "holt+stl"


def test_less_than_two_seasons_leaves_the_series_as_it_is() -> None:
    model = make_model("brown+stl", season_length=SEASON).fit(seasonal_load(40))
    assert isinstance(model, Deseasonalized)
    assert model.profile_ is None
    plain = make_model("brown").fit(seasonal_load(40)).predict(3)
    np.testing.assert_allclose(model.predict(3).mean, plain.mean)


def test_stl_variant_needs_a_season_length() -> None:
    with pytest.raises(ValueError, match="needs season_length"):
        make_model("holt+stl")


def test_auto_compares_seasonal_variants_when_history_covers_the_seasons() -> None:
    model = Auto(season_length=SEASON, candidates=None, horizon=3, n_origins=3)
    model.fit(seasonal_load(24 * 8))
    errors = model.backtest_errors_
    assert {"holt+stl", "arima+stl"} <= set(errors)
    # Taking the season out removes a large share of every plain model's error.
    for plain in ("holt", "arima"):
        assert errors[plain + "+stl"] < 0.75 * errors[plain]
    # The pool of seasonal variants won over the plain pool.
    assert model.chosen_ == "mean(holt+stl, arima+stl)"


def test_a_seasonal_dip_below_the_trend_keeps_the_forecast_non_negative() -> None:
    t = np.arange(24 * 6, dtype=np.float64)
    spiky = np.where(t % SEASON < 3, 100.0, 1.0)  # seasonal component far below zero elsewhere
    forecast = make_model("holt+stl", season_length=SEASON).fit(spiky).predict(SEASON)
    assert (forecast.lower >= 0).all()
    assert forecast.mean[:3].min() > forecast.mean[3:].max()


def test_an_update_starts_using_the_season_once_two_seasons_are_in_the_window() -> None:
    y = seasonal_load(24 * 4)
    model = make_model("holt+stl", season_length=SEASON).fit(y[: SEASON + 5])
    assert model.profile_ is None  # type: ignore[attr-defined]
    model.update(y)
    assert model.profile_ is not None  # type: ignore[attr-defined]
