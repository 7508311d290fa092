"""The Theta method: simple exponential smoothing with half the linear trend's slope as drift."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray
from statsmodels.tsa.forecasting.theta import ThetaModel

from predictive_scaler.forecasting.base import ForecastModel, guarded_means
from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.forecasting.models.smoothing import exponential_filter

# The classic method's theta line: the drift is (1 - 1/THETA) of the linear trend's slope.
THETA = 2.0
DRIFT_SHARE = 1.0 - 1.0 / THETA


def drift_steps(
    alpha: float, observations: NDArray[np.intp] | FloatArray | int, h: FloatArray
) -> FloatArray:
    """How many slopes of drift the forecast at steps ``h`` carries (statsmodels' formula).

    h - 1 + (1 - (1 - alpha)^n) / alpha, which tends to h - 1 + n as alpha
    tends to 0; ``observations`` (n) may be one count per row of a table.
    """
    n = np.asarray(observations, dtype=np.float64)[..., None]
    start = n if alpha <= 1e-12 else -np.expm1(n * np.log1p(-alpha)) / alpha
    return np.asarray(h - 1.0 + start, dtype=np.float64)


def prefix_slopes(y: FloatArray, ends: NDArray[np.intp]) -> FloatArray:
    """The least-squares slope of ``y[:end]`` on time, for every ``end``, from running sums."""
    t = np.arange(y.size, dtype=np.float64)
    sum_t, sum_y, sum_ty = (np.concatenate([[0.0], np.cumsum(v)]) for v in (t, y, t * y))
    sum_tt = np.concatenate([[0.0], np.cumsum(t * t)])
    n = ends.astype(np.float64)
    covariance = sum_ty[ends] - sum_t[ends] * sum_y[ends] / n
    variance = sum_tt[ends] - sum_t[ends] ** 2 / n
    return np.asarray(
        np.divide(covariance, variance, out=np.zeros_like(n), where=variance > 0.0),
        dtype=np.float64,
    )


class Theta(ForecastModel):
    """The Theta method (Assimakopoulos and Nikolopoulos, 2000), as statsmodels' ThetaModel.

    The forecast is simple exponential smoothing's level plus half the slope
    of the window's least-squares line, grown as Hyndman and Billah (2003)
    showed the method to be: SES with drift. It won the M3 competition and
    is one of the M4's standard benchmarks; its errors differ from the
    exponential-smoothing and ARIMA models' (a trend from the whole window,
    a level from the last points), which is what a combination needs.

    statsmodels estimates the smoothing weight (seasons are left to the
    long history's profile, so its deseasonalising is off); an update keeps
    it and recomputes the level and the slope on the new window, which is
    all the method's state. The interval is the base class's, from the
    one-step residuals.
    """

    name = "theta"
    min_observations = 10

    def __init__(self, *, max_window: int = 2000, alpha: float | None = None) -> None:
        if alpha is not None and not 0.0 <= alpha <= 1.0:
            raise ValueError(f"alpha must lie in [0, 1], got {alpha}")
        self.max_window = max_window
        self.alpha = alpha

    def _fit(self, y: FloatArray) -> FloatArray:
        if self.alpha is None:
            window = y[-self.max_window :]
            fitted = ThetaModel(window, deseasonalize=False).fit()
            self.alpha_ = float(np.clip(fitted.params["alpha"], 0.0, 1.0))
        else:
            self.alpha_ = self.alpha
        return self._update(y)

    def _update(self, y: FloatArray) -> FloatArray:
        window = y[-self.max_window :]
        levels = exponential_filter(window, self.alpha_)
        # The last level is all a forecast needs; a workload keeps this model for an hour.
        self.level_ = float(levels[-1])
        self.slope_ = float(prefix_slopes(window, np.array([window.size], dtype=np.intp))[0])
        self.observations_ = window.size
        # One-step forecasts from each point with the window's slope.
        steps = drift_steps(self.alpha_, np.arange(1.0, window.size), np.ones(1))[:, 0]
        one_step = levels[:-1] + DRIFT_SHARE * self.slope_ * steps
        return np.asarray(window[1:] - one_step, dtype=np.float64)

    def _predict_mean(self, h: int) -> FloatArray:
        steps = np.arange(1, h + 1, dtype=np.float64)
        growth = drift_steps(self.alpha_, self.observations_, steps)
        return np.asarray(self.level_ + DRIFT_SHARE * self.slope_ * growth, dtype=np.float64)

    def _rolling_means_at_once(
        self, y: FloatArray, origins: Sequence[int], horizon: int
    ) -> FloatArray | None:
        # An update smooths its window from its first value with the fitted
        # weight and fits its line: when every window starts at the series'
        # start, one pass and running sums give every origin's state.
        if self.is_degraded or origins[-1] > self.max_window:
            return None
        ends = np.asarray(origins, dtype=np.intp)
        levels = exponential_filter(y[: ends[-1]], self.alpha_)[ends - 1]
        slopes = prefix_slopes(y[: ends[-1]], ends)
        steps = np.arange(1, horizon + 1, dtype=np.float64)
        growth = drift_steps(self.alpha_, ends, steps)
        means = levels[:, None] + DRIFT_SHARE * slopes[:, None] * growth
        return guarded_means(means, y, origins)

    def clone_with_fitted_structure(self) -> ForecastModel:
        if self.is_degraded:
            return self.clone()
        return Theta(max_window=self.max_window, alpha=self.alpha_)
