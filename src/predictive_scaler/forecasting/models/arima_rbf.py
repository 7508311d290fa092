"""ARIMA + an RBF network on its residuals: the linear part's dynamics, then what is left."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.cluster import KMeans
from sklearn.linear_model import Ridge
from sklearn.metrics.pairwise import euclidean_distances, rbf_kernel
from sklearn.pipeline import Pipeline, make_pipeline

from predictive_scaler.forecasting.base import ForecastModel, guarded_means
from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.forecasting.models.arima import Arima
from predictive_scaler.forecasting.models.state_space import state_space_forecasts


class GaussianRbfFeatures(TransformerMixin, BaseEstimator):  # type: ignore[misc]
    """Gaussian basis functions centred on k-means centres of the inputs.

    The common width is the mean distance between centres, the usual
    heuristic for RBF networks, so the features adapt to the residuals' scale.
    """

    def __init__(self, n_centers: int = 8, random_state: int = 0) -> None:
        self.n_centers = n_centers
        self.random_state = random_state

    def fit(self, x: FloatArray, y: Any = None) -> GaussianRbfFeatures:
        clusters = KMeans(self.n_centers, n_init=1, random_state=self.random_state).fit(x)
        self.centers_ = clusters.cluster_centers_
        distances = euclidean_distances(self.centers_)
        mean_distance = float(distances.sum() / max(distances.size - len(distances), 1))
        width = mean_distance if mean_distance > 0.0 else 1.0
        self.gamma_ = 1.0 / (2.0 * width**2)
        return self

    def transform(self, x: FloatArray) -> FloatArray:
        return np.asarray(rbf_kernel(x, self.centers_, gamma=self.gamma_), dtype=np.float64)


def lagged(values: FloatArray, lags: int) -> tuple[FloatArray, FloatArray]:
    """Rows [v_{t-1}, ..., v_{t-lags}] and targets v_t."""
    windows = sliding_window_view(values[:-1], lags)[:, ::-1]
    return np.ascontiguousarray(windows), values[lags:]


class ArimaRbf(ForecastModel):
    """ARIMA for the linear part plus an RBF network on lagged ARIMA residuals.

    The network (Gaussian basis at k-means centres, ridge output) forecasts
    the residual series recursively; the forecast is the sum. The interval
    keeps ARIMA's width around the corrected mean.
    """

    name = "arima_rbf"
    min_observations = 20

    def __init__(
        self,
        *,
        arima: Arima | None = None,
        lags: int = 4,
        n_centers: int = 8,
        ridge_alpha: float = 1.0,
        random_state: int = 0,
    ) -> None:
        if lags < 1 or n_centers < 1:
            raise ValueError("lags and n_centers must be >= 1")
        # The linear part's own hyper-parameters live on an unfitted Arima template.
        self.arima = arima if arima is not None else Arima()
        self.lags = lags
        self.n_centers = n_centers
        self.ridge_alpha = ridge_alpha
        self.random_state = random_state

    def _fit(self, y: FloatArray) -> FloatArray:
        self.arima_ = self.arima.clone().fit(y)
        residuals = self._linear_residuals()
        self.network_: Pipeline | None = None
        if residuals.size >= self.lags + 2 * self.n_centers:
            self.network_ = make_pipeline(
                GaussianRbfFeatures(self.n_centers, self.random_state),
                Ridge(alpha=self.ridge_alpha),
            ).fit(*lagged(residuals, self.lags))
        return self._network_residuals(residuals)

    def _update(self, y: FloatArray) -> FloatArray:
        # ARIMA filters with its parameters; the network keeps its weights.
        self.arima_.update(y)
        residuals = self._linear_residuals()
        if residuals.size <= self.lags:
            self.network_ = None
        return self._network_residuals(residuals)

    def _linear_residuals(self) -> FloatArray:
        if self.arima_.is_degraded:
            raise ValueError(self.arima_.fallback_reason_)
        return self.arima_.load_residuals()

    def _network_residuals(self, residuals: FloatArray) -> FloatArray:
        """What is left after the network: the model's one-step residuals."""
        if self.network_ is None:
            return residuals
        features, targets = lagged(residuals, self.lags)
        self.recent_residuals_ = residuals[-self.lags :]
        return np.asarray(targets - self._network(features), dtype=np.float64)

    def _rolling_means_at_once(
        self, y: FloatArray, origins: Sequence[int], horizon: int
    ) -> FloatArray | None:
        # The linear part's filter once (shared with arima's backtest), then
        # the network's recursive correction from every origin at once.
        filtered = None if self.is_degraded else self.arima_.filter_through(y, origins)
        linear = None if filtered is None else state_space_forecasts(filtered, origins, horizon)
        if filtered is None or linear is None:
            return None
        correction = np.zeros_like(linear)
        if self.network_ is not None:
            residuals = np.asarray(filtered.forecasts_error[0], dtype=np.float64)
            history = np.array([residuals[origin - self.lags : origin] for origin in origins])
            for step in range(horizon):
                rows = history[:, ::-1][:, : self.lags]
                correction[:, step] = self._network(rows)
                history = np.column_stack([history, correction[:, step]])
        return guarded_means(linear + correction, y, origins)

    def _network(self, rows: FloatArray) -> FloatArray:
        """The fitted network's output: Gaussian features at the centres, then the ridge.

        What its scikit-learn pipeline computes, in two numpy lines: the
        pipeline's input checks cost ~1 ms a call, and an update calls it
        once per step of the horizon.
        """
        assert self.network_ is not None
        features_step, ridge = self.network_[0], self.network_[-1]
        centres = features_step.centers_
        squared = ((rows[:, None, :] - centres[None, :, :]) ** 2).sum(axis=2)
        features = np.exp(-features_step.gamma_ * squared)
        return np.asarray(features @ ridge.coef_ + ridge.intercept_, dtype=np.float64)

    def _residual_correction(self, h: int) -> FloatArray:
        if self.network_ is None:
            return np.zeros(h)
        history = list(self.recent_residuals_)
        for _ in range(h):
            row = np.asarray(history[-self.lags :][::-1]).reshape(1, -1)
            history.append(float(self._network(row)[0]))
        return np.asarray(history[self.lags :], dtype=np.float64)

    def _predict_mean(self, h: int) -> FloatArray:
        return self.arima_._predict_mean(h) + self._residual_correction(h)

    def _predict_interval(self, h: int, level: float) -> tuple[FloatArray, FloatArray, FloatArray]:
        mean, lower, upper = self.arima_._predict_interval(h, level)
        correction = self._residual_correction(h)
        return mean + correction, lower + correction, upper + correction

    def clone_with_fitted_structure(self) -> ForecastModel:
        params = self.get_params()
        if not self.is_degraded:
            params["arima"] = self.arima_.clone_with_fitted_structure()
        return type(self)(**params)
