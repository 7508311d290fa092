"""Load forecasting: models, the Forecast value object, the registry and backtest selection.

Pure: numpy, statsmodels and scikit-learn only; nothing here knows about
Kubernetes or Prometheus.

>>> from predictive_scaler.forecasting import make_model
>>> forecast = make_model("gm11").fit([2.874, 3.278, 3.337, 3.390, 3.679]).predict(2)
>>> forecast.mean.round(3).tolist()
[3.751, 3.893]
"""

from predictive_scaler.forecasting.auto import Auto, ModelSelection, select_model
from predictive_scaler.forecasting.base import ForecastModel, NotFittedError
from predictive_scaler.forecasting.forecast import Forecast
from predictive_scaler.forecasting.hygiene import clean_series
from predictive_scaler.forecasting.refresh import ModelPendingError, ScheduledSelection
from predictive_scaler.forecasting.refresh_job import Refreshed, RefreshRequest, refresh_model
from predictive_scaler.forecasting.registry import MODEL_NAMES, make_model

__all__ = [
    "MODEL_NAMES",
    "Auto",
    "Forecast",
    "ForecastModel",
    "ModelPendingError",
    "ModelSelection",
    "NotFittedError",
    "RefreshRequest",
    "Refreshed",
    "ScheduledSelection",
    "clean_series",
    "make_model",
    "refresh_model",
    "select_model",
]
