"""Rolling-origin evaluation: refit at successive origins, forecast, compare."""

from __future__ import annotations

import numpy as np

from predictive_scaler.forecasting.base import ForecastModel
from predictive_scaler.forecasting.forecast import FloatArray


def rolling_origins(n: int, horizon: int, n_origins: int, min_train: int) -> list[int]:
    """The last ``n_origins`` origins, ``horizon`` apart, each leaving a full horizon to check.

    Fewer are returned when the series cannot keep ``min_train`` points
    before the earliest one.
    """
    last = n - horizon
    origins = [last - i * horizon for i in range(n_origins)]
    return sorted(origin for origin in origins if origin >= min_train)


def backtest_errors(
    template: ForecastModel, y: FloatArray, horizon: int, origins: list[int]
) -> FloatArray:
    """Errors (actual - forecast) of ``template`` refitted at each origin: (origins, horizon).

    Raises ValueError when the model degrades to naive at an origin, since
    then it is not the model being measured.
    """
    errors = np.empty((len(origins), horizon))
    for row, origin in enumerate(origins):
        model = template.clone().fit(y[:origin])
        if model.is_degraded:
            raise ValueError(model.fallback_reason_)
        forecast = model.predict(horizon)
        errors[row] = y[origin : origin + horizon] - forecast.mean
    return errors
