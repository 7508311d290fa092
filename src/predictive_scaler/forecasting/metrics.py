"""Forecast errors used to compare and select models."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from predictive_scaler.forecasting.forecast import FloatArray

# Under-forecasting means overload; over-forecasting only costs replicas.
DEFAULT_UNDER_WEIGHT = 3.0


def naive_scale(y: FloatArray, season_length: int = 1) -> float:
    """Mean absolute in-sample error of the (seasonal) naive forecast; MASE's denominator.

    Falls back to the one-step scale when the series is shorter than a season,
    and to 1.0 for a constant series, so that dividing by it is always safe.
    """
    lag = season_length if y.size > season_length else 1
    if y.size <= lag:
        return 1.0
    scale = float(np.mean(np.abs(y[lag:] - y[:-lag])))
    return scale if scale > 0.0 else 1.0


def asymmetric_error(
    actual: ArrayLike,
    forecast: ArrayLike,
    scale: float = 1.0,
    under_weight: float = DEFAULT_UNDER_WEIGHT,
) -> float:
    """Scaled mean absolute error where an under-forecast weighs ``under_weight`` times more.

    With weight w this ranks models as the pinball loss at quantile w/(1+w)
    does (0.75 for the default 3), i.e. it prefers forecasts that err high.
    """
    errors = np.asarray(actual, dtype=np.float64) - np.asarray(forecast, dtype=np.float64)
    return weighted_error(errors, scale, under_weight)


def weighted_error(
    errors: ArrayLike, scale: float = 1.0, under_weight: float = DEFAULT_UNDER_WEIGHT
) -> float:
    """:func:`asymmetric_error` of errors already taken as actual - forecast."""
    return float(np.mean(_weighted_abs(errors, under_weight)) / scale)


def weighted_error_per_row(
    errors: ArrayLike, scale: float = 1.0, under_weight: float = DEFAULT_UNDER_WEIGHT
) -> FloatArray:
    """:func:`weighted_error` of each row (one backtest origin) of a table of errors."""
    return np.asarray(np.mean(_weighted_abs(errors, under_weight), axis=1) / scale)


def _weighted_abs(errors: ArrayLike, under_weight: float) -> FloatArray:
    values = np.asarray(errors, dtype=np.float64)
    return np.asarray(np.where(values > 0.0, under_weight, 1.0) * np.abs(values))


def mase(actual: ArrayLike, forecast: ArrayLike, scale: float) -> float:
    """Mean absolute error divided by ``scale`` (see :func:`naive_scale`)."""
    errors = np.asarray(actual, dtype=np.float64) - np.asarray(forecast, dtype=np.float64)
    return float(np.mean(np.abs(errors)) / scale)
