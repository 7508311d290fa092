"""The base models by name (everything but ``auto``, which selects among these)."""

from __future__ import annotations

from typing import Any

from predictive_scaler.forecasting.base import ForecastModel, init_parameters
from predictive_scaler.forecasting.models.arima import Arima
from predictive_scaler.forecasting.models.arima_rbf import ArimaRbf
from predictive_scaler.forecasting.models.baseline import Naive, SeasonalNaive
from predictive_scaler.forecasting.models.grey import GM11, GreyExponentialSmoothing
from predictive_scaler.forecasting.models.smoothing import Brown, Ets, Holt
from predictive_scaler.forecasting.models.theta import Theta
from predictive_scaler.forecasting.models.trees import GradientBoostedTrees
from predictive_scaler.forecasting.seasonal import SUFFIX, Deseasonalized

BASE_MODELS: dict[str, type[ForecastModel]] = {
    model.name: model
    for model in (
        Naive,
        SeasonalNaive,
        Brown,
        Holt,
        Ets,
        Theta,
        GM11,
        GreyExponentialSmoothing,
        Arima,
        ArimaRbf,
        GradientBoostedTrees,
    )
}


def make_base_model(name: str, **params: Any) -> ForecastModel:
    """Build a base model; ``<name>+stl`` wraps it in STL deseasonalisation.

    ``season_length`` is passed to the models that use it and ignored by the
    others, so one set of parameters can build every candidate.
    """
    deseasonalize = name.endswith(SUFFIX)
    base_name = name.removesuffix(SUFFIX)
    if base_name not in BASE_MODELS:
        known = ", ".join([*BASE_MODELS, "auto"])
        raise ValueError(
            f"unknown model {name!r}; known models: {known} (any base model + {SUFFIX!r})"
        )
    model_class = BASE_MODELS[base_name]
    season_length = params.pop("season_length", None)
    if season_length is not None and "season_length" in init_parameters(model_class):
        params["season_length"] = season_length
    try:
        model = model_class(**params)
    except TypeError as error:
        raise ValueError(f"bad parameters for model {name!r}: {error}") from None
    if not deseasonalize:
        return model
    if season_length is None:
        raise ValueError(f"model {name!r} needs season_length")
    return Deseasonalized(model, season_length)
