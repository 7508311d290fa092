"""Every model by name: ``make_model(name, **params)`` and the list of names."""

from __future__ import annotations

from typing import Any

from predictive_scaler.forecasting.auto import Auto
from predictive_scaler.forecasting.base import ForecastModel
from predictive_scaler.forecasting.catalog import BASE_MODELS, make_base_model

MODEL_NAMES: tuple[str, ...] = (*BASE_MODELS, Auto.name)


def make_model(name: str, **params: Any) -> ForecastModel:
    """An unfitted model; unknown names and parameters raise ValueError naming them."""
    if name == Auto.name:
        try:
            return Auto(**params)
        except TypeError as error:
            raise ValueError(f"bad parameters for model 'auto': {error}") from None
    return make_base_model(name, **params)
