"""Exponential smoothing: Brown's double smoothing by hand, Holt from statsmodels."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy.signal import lfilter
from scipy.stats import norm
from statsmodels.tools import eval_measures
from statsmodels.tsa.exponential_smoothing.ets import ETSModel

from predictive_scaler.forecasting.base import ForecastModel, guarded_means
from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.forecasting.models.moving_window import overlap
from predictive_scaler.forecasting.models.search import lowest_criterion


def exponential_filter(values: FloatArray, alpha: float) -> FloatArray:
    """S_t = alpha*x_t + (1-alpha)*S_{t-1} with S_0 = x_0, as one C-level filter."""
    initial_state = [(1.0 - alpha) * values[0]]
    smoothed, _ = lfilter([alpha], [1.0, alpha - 1.0], values, zi=initial_state)
    return np.asarray(smoothed, dtype=np.float64)


class Brown(ForecastModel):
    """Brown's double exponential smoothing, exactly as in design.md section 2.

    S1_t = a*y_t + (1-a)*S1_{t-1}; S2_t = a*S1_t + (1-a)*S2_{t-1}, starting
    from S1 = S2 = y_0; level A = 2*S1 - S2, trend B = a/(1-a)*(S1 - S2),
    forecast y_{t+T} = A + B*T.
    """

    name = "brown"
    uses_thread_pools = False
    min_observations = 2

    def __init__(self, alpha: float = 0.5) -> None:
        if not 0.0 < alpha < 1.0:
            raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
        self.alpha = alpha

    def _fit(self, y: FloatArray) -> FloatArray:
        levels, trends = self._levels_and_trends(y)
        self.level_ = float(levels[-1])
        self.trend_ = float(trends[-1])
        one_step_ahead = levels[:-1] + trends[:-1]
        return y[1:] - one_step_ahead

    def _levels_and_trends(self, y: FloatArray) -> tuple[FloatArray, FloatArray]:
        s1 = exponential_filter(y, self.alpha)
        s2 = exponential_filter(s1, self.alpha)
        return 2.0 * s1 - s2, self.alpha / (1.0 - self.alpha) * (s1 - s2)

    def _rolling_means_at_once(
        self, y: FloatArray, origins: Sequence[int], horizon: int
    ) -> FloatArray | None:
        # The smoothing is a causal filter from y_0: its value at each origin
        # is what a fit there gives, so one pass serves every origin.
        if self.is_degraded or len(origins) == 0:
            return None
        levels, trends = self._levels_and_trends(y[: origins[-1]])
        ends = np.asarray(origins) - 1
        steps = np.arange(1, horizon + 1, dtype=np.float64)
        return guarded_means(levels[ends, None] + trends[ends, None] * steps, y, origins)

    def _predict_mean(self, h: int) -> FloatArray:
        return self.level_ + self.trend_ * np.arange(1, h + 1, dtype=np.float64)


# (trend, damped) of the additive-error ETS models ``ets`` chooses among.
EtsConfig = tuple[str | None, bool]
ETS_CONFIGS: tuple[EtsConfig, ...] = ((None, False), ("add", False), ("add", True))


def ets_model(y: FloatArray, max_window: int, config: EtsConfig) -> ETSModel:
    """statsmodels ETS (additive error) on the last ``max_window`` points."""
    # A pandas Series, because statsmodels' ETS prediction intervals index
    # their result by the input's index and fail on a bare ndarray.
    trend, damped = config
    return ETSModel(pd.Series(y[-max_window:]), error="add", trend=trend, damped_trend=damped)


class EtsFit:
    """Fitted ETS parameters and their AICc, without statsmodels' results object.

    ``ETSModel.fit`` wraps its estimates in results whose construction
    smooths the series again and takes a numerical Hessian for the
    parameters' covariance (~5 ms) that no forecast reads; ``ets`` fits
    three forms and keeps one. The model builds them when an interval needs them.
    """

    def __init__(self, model: ETSModel, params: FloatArray) -> None:
        self.model = model
        self.params = np.asarray(params, dtype=np.float64)
        self.named_params = dict(zip(model.param_names, self.params.tolist(), strict=True))
        # As ETSResults: the concentrated log-likelihood, df_model = free parameters + 1.
        llf = float(model.loglike(self.params))
        self.aicc = float(eval_measures.aicc(llf, model.nobs, self.params.size + 1))


def fit_ets(y: FloatArray, max_window: int, config: EtsConfig, start_params: Any = None) -> EtsFit:
    model = ets_model(y, max_window, config)
    return EtsFit(model, model.fit(disp=False, start_params=start_params, return_params=True))


def ets_states(
    y: FloatArray,
    config: EtsConfig,
    params: dict[str, float],
    start: tuple[float, float] | None = None,
) -> tuple[FloatArray, FloatArray, FloatArray, float]:
    """One-step errors of an additive-error ETS over ``y``, its states after each value, and phi.

    The recursion statsmodels' ``ETSModel.smooth`` runs (l_t = l_{t-1} +
    phi*b_{t-1} + alpha*e_t, b_t = phi*b_{t-1} + beta*e_t), from the fitted
    initial states (the same values to rounding, ~1e-13) or from ``start``
    (level, slope), where an earlier pass ended.
    """
    trend, damped = config
    alpha = params["smoothing_level"]
    beta = params.get("smoothing_trend", 0.0)
    phi = (params["damping_trend"] if damped else 1.0) if trend is not None else 0.0
    if start is not None:
        level, slope = start
    else:
        level = params["initial_level"]
        slope = params.get("initial_trend", 0.0) if trend is not None else 0.0
    errors, levels, slopes = np.empty(y.size), np.empty(y.size), np.empty(y.size)
    for index, value in enumerate(y.tolist()):
        expected = level + phi * slope
        error = value - expected
        errors[index] = error
        level = expected + alpha * error
        slope = phi * slope + beta * error
        levels[index], slopes[index] = level, slope
    return errors, levels, slopes, phi


def relative_forecast_variance(config: EtsConfig, params: dict[str, float], h: int) -> FloatArray:
    """The h-step forecast error variance of an additive-error ETS over the one-step variance.

    Hyndman et al., *Forecasting with Exponential Smoothing* (2008), section
    6.3 (class 1): 1 + sum_{j<h} c_j**2 with c_j = alpha + beta*phi_j, where
    phi_j = phi + ... + phi**j (j without damping, 0 without a trend).
    statsmodels' ``ETSResults`` gives the same by closed forms per model, but
    only from a results object, which costs a smoothing pass over the window.
    """
    trend, damped = config
    alpha = params["smoothing_level"]
    steps = np.arange(1, h, dtype=np.float64)
    if trend is None:
        trend_gain = np.zeros_like(steps)
    elif damped:
        trend_gain = params["smoothing_trend"] * np.cumsum(params["damping_trend"] ** steps)
    else:
        trend_gain = params["smoothing_trend"] * steps
    return np.concatenate([[1.0], 1.0 + np.cumsum((alpha + trend_gain) ** 2)])


class StateSpaceSmoothing(ForecastModel):
    """ETS forecasts from parameters statsmodels fitted, with their analytic intervals.

    The state-space form is used rather than ``holtwinters`` because it
    gives analytic prediction intervals. A fit keeps statsmodels' estimates
    (:class:`EtsFit`); it and an update then run the filter themselves
    (:func:`ets_states`) and keep the last state for the forecast mean and
    the one-step errors for the interval: statsmodels' results object would
    cost ~10 ms, most of it a numerical Hessian for the parameters'
    covariance that no forecast reads.
    """

    min_observations = 10
    max_window: int
    _window_: FloatArray | None = None
    # The fitted parameters, in statsmodels' order (``ETSModel.param_names``).
    params_: FloatArray
    # (level, trend, phi) after the last observation: all a forecast mean needs.
    state_: tuple[float, float, float]

    def _take(self, fit: EtsFit, y: FloatArray) -> FloatArray:
        """Keep a fit's parameters and filter ``y`` with them; its one-step errors."""
        self.params_, self._named_params_ = fit.params, fit.named_params
        # New parameters: smoothed from their initial states, not from the last pass's end.
        self._window_ = None
        return self._update(y)

    def _config(self) -> EtsConfig:
        """The (trend, damped) form of the fitted model."""
        raise NotImplementedError

    def _update(self, y: FloatArray) -> FloatArray:
        # The filter alone, with the fitted parameters (no optimisation), over the
        # new points alone when the window has only moved on (see moving_window).
        window, previous = y[-self.max_window :], self._window_
        shared = None if previous is None else overlap(previous, window)
        if previous is None or shared is None:
            errors, levels, slopes, phi = ets_states(window, self._config(), self._named_params_)
            self.state_ = (float(levels[-1]), float(slopes[-1]), phi)
        else:
            level, slope, phi = self.state_
            new, levels, slopes, _ = ets_states(
                window[shared:], self._config(), self._named_params_, (level, slope)
            )
            if new.size:
                self.state_ = (float(levels[-1]), float(slopes[-1]), phi)
            # residuals_ still holds the last pass's errors: the base class stores
            # what this returns.
            errors = np.concatenate([self.residuals_[previous.size - shared :], new])
        self._window_ = window
        return errors

    def _rolling_means_at_once(
        self, y: FloatArray, origins: Sequence[int], horizon: int
    ) -> FloatArray | None:
        # An update smooths its window from the fitted initial states with the
        # fitted parameters; when every window starts at the series' start,
        # one pass holds the state at every origin.
        if self.is_degraded or self.y_.size != origins[0] or origins[-1] > self.max_window:
            return None
        _, levels, slopes, phi = ets_states(y[: origins[-1]], self._config(), self._named_params_)
        ends = np.asarray(origins) - 1
        growth = np.cumsum(phi ** np.arange(1, horizon + 1, dtype=np.float64))
        means = levels[ends, None] + slopes[ends, None] * growth
        return guarded_means(means, y, origins)

    def _predict_mean(self, h: int) -> FloatArray:
        level, slope, phi = self.state_
        growth = np.cumsum(phi ** np.arange(1, h + 1, dtype=np.float64))
        return np.asarray(level + slope * growth, dtype=np.float64)

    def _predict_interval(self, h: int, level: float) -> tuple[FloatArray, FloatArray, FloatArray]:
        # statsmodels' analytic interval (its mean squared one-step error times
        # the relative variance), with the one-step errors of this model's own
        # pass over the window: an update that moved on carried its state from
        # further back than a smoothing of the window alone would.
        mean = self._predict_mean(h)
        variance = float(np.mean(self.residuals_**2)) * relative_forecast_variance(
            self._config(), self._named_params_, h
        )
        half_width = float(norm.ppf(0.5 + level / 2.0)) * np.sqrt(variance)
        return mean, mean - half_width, mean + half_width


class Holt(StateSpaceSmoothing):
    """Holt's linear trend (additive error and trend ETS), parameters fitted by statsmodels."""

    name = "holt"

    def __init__(self, damped_trend: bool = False, max_window: int = 2000) -> None:
        self.damped_trend = damped_trend
        self.max_window = max_window

    def _fit(self, y: FloatArray) -> FloatArray:
        return self._take(fit_ets(y, self.max_window, self._config()), y)

    def _config(self) -> EtsConfig:
        return ("add", self.damped_trend)


class Ets(StateSpaceSmoothing):
    """Exponential smoothing whose form is chosen by information criterion.

    Simple smoothing, Holt's trend and the damped trend (all with additive
    error, which tolerates the zeros of idle workloads) are fitted and the
    lowest AICc wins, as in AutoETS; seasons are left to ``ets+stl``.
    """

    name = "ets"

    def __init__(
        self,
        *,
        config: EtsConfig | None = None,
        max_window: int = 2000,
        start_params: tuple[float, ...] | None = None,
    ) -> None:
        if config is not None and tuple(config) not in ETS_CONFIGS:
            raise ValueError(f"config must be one of {ETS_CONFIGS}, got {config!r}")
        self.config = None if config is None else (config[0], bool(config[1]))
        self.max_window = max_window
        self.start_params = start_params

    def _fit(self, y: FloatArray) -> FloatArray:
        start = self.start_params if self.config else None
        self.information_criterion_, self.config_, fit = lowest_criterion(
            [self.config] if self.config else ETS_CONFIGS,
            lambda config: fit_ets(y, self.max_window, config, start),
            "aicc",
        )
        return self._take(fit, y)

    def _config(self) -> EtsConfig:
        return self.config_

    def clone_with_fitted_structure(self) -> ForecastModel:
        if self.is_degraded:
            return self.clone()
        params = tuple(float(value) for value in self.params_)
        return Ets(config=self.config_, max_window=self.max_window, start_params=params)
