"""Backtests forecasting every origin at once give what updating origin by origin does."""

from __future__ import annotations

import numpy as np
import pytest

from predictive_scaler.forecasting import ForecastModel, make_model
from predictive_scaler.forecasting.backtest import rolling_origins
from predictive_scaler.forecasting.models.arima import ArimaRbf
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
