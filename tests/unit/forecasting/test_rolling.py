"""Backtests forecasting every origin at once give what updating origin by origin does."""

from __future__ import annotations

import numpy as np
import pytest

from predictive_scaler.forecasting import ForecastModel, make_model
from predictive_scaler.forecasting.backtest import rolling_origins
from predictive_scaler.forecasting.models import arima as arima_module
from predictive_scaler.forecasting.models.arima import Arima
from predictive_scaler.forecasting.models.arima_rbf import ArimaRbf
from predictive_scaler.forecasting.models.state_space import RecentResults, forget_recent_results
from predictive_scaler.forecasting.selection import select_model
from tests.conftest import seasonal_load

SERIES = seasonal_load(240)
ORIGINS = rolling_origins(SERIES.size, 3, 16, SERIES.size // 2)


def origin_by_origin(model: ForecastModel) -> np.ndarray:
    fitted = model.clone().fit(SERIES[: ORIGINS[0]])
    return ForecastModel.rolling_means(fitted, SERIES, ORIGINS, 3)


@pytest.mark.parametrize("name", ["brown", "holt", "ets", "theta", "arima", "arima_rbf", "gbdt"])
def test_forecasting_every_origin_at_once_matches_updating_at_each(name: str) -> None:
    model = make_model(name)
    fitted = model.clone().fit(SERIES[: ORIGINS[0]])
    at_once = fitted.rolling_means(SERIES, ORIGINS, 3)
    np.testing.assert_allclose(at_once, origin_by_origin(model), rtol=1e-7, atol=1e-7)


def test_forecast_mean_is_the_mean_of_predict() -> None:
    for name in ("naive", "brown", "holt", "theta", "arima", "gbdt", "grey_es"):
        model = make_model(name).fit(SERIES)
        np.testing.assert_allclose(model.forecast_mean(4), model.predict(4).mean, rtol=1e-12)


def test_the_networks_numpy_output_is_its_pipelines() -> None:
    model = ArimaRbf().fit(SERIES)
    assert model.network_ is not None
    rows = np.random.default_rng(0).normal(0.0, 5.0, (20, model.lags))
    np.testing.assert_allclose(model._network(rows), model.network_.predict(rows), rtol=1e-9)


@pytest.fixture
def searches(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The window sizes of every ARIMA order search from here on."""
    sizes: list[int] = []
    search = Arima._search

    def counted(self: Arima, window: np.ndarray, start: tuple[float, ...] | None) -> object:
        sizes.append(window.size)
        return search(self, window, start)

    monkeypatch.setattr(Arima, "_search", counted)
    return sizes


@pytest.mark.parametrize("length", [240, 720])
def test_a_selection_searches_arimas_orders_once_for_arima_and_arima_rbf(
    length: int, monkeypatch: pytest.MonkeyPatch, searches: list[int]
) -> None:
    # 720 points outgrow ARIMA's 600-point window, so the backtest filters once per
    # origin: those filters once pushed the search out of a cache shared with them.
    # Empty caches of the sizes the library runs with: no earlier test's fit is found.
    for cache in ("RECENT_FITS", "RECENT_FILTERS"):
        size = getattr(arima_module, cache).size
        monkeypatch.setattr(arima_module, cache, RecentResults(size))
    series = seasonal_load(length)
    select_model(series, candidates=["arima", "arima_rbf"], horizon=3)
    # One search at the first origin; no second one for arima_rbf's linear part.
    assert len(searches) == 1, searches


def test_forgetting_recent_results_makes_the_next_fit_search_again(searches: list[int]) -> None:
    # What the forecasting benchmark relies on to time each fit as a workload's own.
    series = seasonal_load(200) + np.linspace(0.0, 1.0, 200)
    forget_recent_results()
    Arima().fit(series)
    Arima().fit(series)
    assert len(searches) == 1, "the same window's search is reused"
    forget_recent_results()
    Arima().fit(series)
    assert len(searches) == 2
