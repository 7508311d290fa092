"""statsmodels state-space plumbing shared by the ARIMA models: reuse, memory, fast paths.

A fitted ARIMA is a linear Gaussian state-space model. Between refits the
operator only filters new windows with the fitted parameters, and forecasts
from the last predicted state: these helpers do that with the filter alone,
without building a statsmodels model or results object each time.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np
from statsmodels.tsa.statespace.kalman_filter import (
    MEMORY_NO_FILTERED,
    MEMORY_NO_FORECAST_COV,
    MEMORY_NO_GAIN,
    MEMORY_NO_LIKELIHOOD,
    MEMORY_NO_SMOOTHING,
    MEMORY_NO_STD_FORECAST,
    KalmanFilter,
)

from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.forecasting.models.moving_window import overlap

SYSTEM_MATRICES = (
    "design",
    "obs_intercept",
    "obs_cov",
    "transition",
    "state_intercept",
    "selection",
    "state_cov",
)
FILTER_SETTINGS = (
    "filter_method",
    "inversion_method",
    "stability_method",
    "tolerance",
    "loglikelihood_burn",
)
# An update reads the one-step errors, the predicted states and the last
# predicted state's covariance; the filter stores nothing else.
UPDATE_STORES_ONLY_PREDICTIONS = (
    MEMORY_NO_FILTERED
    | MEMORY_NO_FORECAST_COV
    | MEMORY_NO_GAIN
    | MEMORY_NO_LIKELIHOOD
    | MEMORY_NO_SMOOTHING
    | MEMORY_NO_STD_FORECAST
)


class RecentResults:
    """The last few statsmodels results by what produced them: a fit or a filter is a pure
    function of the window and the settings (or parameters).

    In one selection ``arima`` and ``arima_rbf``'s linear part search the same
    orders on the same window and filter it with the same parameters; this
    lets the second reuse the first's work (an order search is most of a
    selection's cost) instead of repeating it.

    Fits and filters are kept apart: where the backtest cannot read every
    origin from one filter pass it filters once per origin, and those
    filters, in one cache with the fits, evicted the order search before
    ``arima_rbf`` asked for it (Alibaba: 15 filters per model, so both
    searches ran).
    """

    def __init__(self, size: int = 8) -> None:
        self.size = size
        self._results: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        with self._lock:
            if key in self._results:
                self._results.move_to_end(key)
                return self._results[key]
        value = compute()
        with self._lock:
            self._results[key] = value
            while len(self._results) > self.size:
                self._results.popitem(last=False)
        return value

    def clear(self) -> None:
        with self._lock:
            self._results.clear()


# A fit (an order search's results, about 1.2 MiB on 600 points) per pathway
# and workload being selected at once; the filters of every backtest origin of
# two models (a filter keeps only its predictions: about 0.15 MiB on 600
# points, so at most about 9 MiB).
RECENT_FITS = RecentResults(8)
RECENT_FILTERS = RecentResults(64)


def forget_recent_results() -> None:
    """Empty both caches, so that the next fit pays for its own search and filters.

    For timing one model's fit as a workload's selection would: there, no
    other model has just searched the same window.
    """
    RECENT_FITS.clear()
    RECENT_FILTERS.clear()


def shed_filter_buffers(results: Any) -> Any:
    """``results``, its model no longer holding the Kalman filter and smoother of its last run.

    statsmodels keeps them on the model, with every buffer they filled (a
    state covariance per step), for its next run: copies of what the
    results already hold, and most of a fitted ARIMA's memory. They are
    rebuilt when the model runs again. Without them a workload's forecaster
    (two pathways of auto's pool) held 1.5 MiB on NASA's windows.
    """
    ssm = results.model.ssm
    for cache in ("_kalman_filters", "_kalman_smoothers", "_statespaces"):
        getattr(ssm, cache, {}).clear()
    return results


def constant_system(filtered: Any, names: Sequence[str]) -> dict[str, FloatArray] | None:
    """The named system matrices of a filter pass, each cut to one time slice (its last axis).

    statsmodels stores a matrix once per observation when any part of the
    system varies with time (an ARIMA's constant intercept does); None when
    one of these really changes over time.
    """
    system = {}
    for name in names:
        matrix = np.asarray(getattr(filtered, name), dtype=np.float64)
        if matrix.shape[-1] > 1 and np.ptp(matrix, axis=-1).any():
            return None
        system[name] = matrix[..., :1]
    return system


def means_from_states(
    system: dict[str, FloatArray], states: FloatArray, horizon: int
) -> FloatArray:
    """Forecast means from each column of ``states`` (predicted states): (columns, horizon)."""
    design, transition = system["design"][:, :, 0], system["transition"][:, :, 0]
    obs_intercept, state_intercept = system["obs_intercept"], system["state_intercept"]
    means = np.empty((states.shape[1], horizon))
    for step in range(horizon):
        means[:, step] = (design @ states + obs_intercept)[0]
        states = transition @ states + state_intercept
    return means


def state_space_forecasts(filtered: Any, origins: Sequence[int], horizon: int) -> FloatArray | None:
    """Forecast means from every origin of one statsmodels filter pass: (origins, horizon).

    The predicted state at an origin is the one a filter over the series up
    to it reaches, so the forecasts are those of an update there. None when
    the model's matrices vary with time (the forecast then needs statsmodels).
    """
    system = constant_system(filtered, ("design", "obs_intercept", "transition", "state_intercept"))
    if system is None or system["design"].shape[0] != 1:
        return None
    return means_from_states(system, filtered.predicted_state[:, list(origins)], horizon)


@dataclass(frozen=True)
class FilterEnd:
    """Where a Kalman filter pass over a window ended, and the window's one-step errors.

    An update's forecasts and bands read the last predicted state and its
    covariance, its residuals the errors. When the next window is this one
    moved on by a few new points (the operator's recent window, read again a
    sync period later), ``extended`` runs the filter over the new points alone
    instead of over the whole window: the filter then covers everything seen
    since the window it started on, where re-filtering the window started
    afresh at its first point. Both are the model's filter with the fitted
    parameters; their ends differ by what the older start still weighs, which
    fades as powers of the fitted MA roots' inverses over the window.
    """

    values: FloatArray  # the window the filter has reached the end of
    errors: FloatArray  # its one-step forecast errors, one per value
    state: FloatArray  # the state predicted for the step after the window
    covariance: FloatArray  # and its covariance
    system: dict[str, FloatArray]  # the model's constant matrices (a time slice each)

    @classmethod
    def of(cls, filtered: Any, values: FloatArray) -> FilterEnd | None:
        """The end of a statsmodels filter pass over ``values``; None for a time-varying system."""
        system = constant_system(filtered, SYSTEM_MATRICES)
        if system is None or system["design"].shape[0] != 1:
            return None
        nobs = int(filtered.nobs)
        return cls(
            np.array(values, dtype=np.float64),
            np.asarray(filtered.forecasts_error[0], dtype=np.float64).copy(),
            np.asarray(filtered.predicted_state[:, nobs], dtype=np.float64).copy(),
            np.asarray(filtered.predicted_state_cov[:, :, nobs], dtype=np.float64).copy(),
            system,
        )

    def extended(self, window: FloatArray) -> FilterEnd | None:
        """The filter carried over ``window``'s new points, or None when it does not continue."""
        shared = overlap(self.values, window)
        if shared is None:
            return None
        carried = self._filter(window[shared:])
        if carried is None:
            return None
        errors, state, covariance = carried
        kept = self.errors[self.values.size - shared :]
        return FilterEnd(
            np.array(window, dtype=np.float64),
            np.concatenate([kept, errors]),
            state,
            covariance,
            self.system,
        )

    def _filter(self, new: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray] | None:
        """statsmodels' conventional Kalman filter over ``new`` from this end."""
        design = self.system["design"][:, :, 0]
        transition = self.system["transition"][:, :, 0]
        obs_intercept = float(self.system["obs_intercept"][0, 0])
        obs_cov = float(self.system["obs_cov"][0, 0, 0])
        state_intercept = self.system["state_intercept"][:, 0]
        selection = self.system["selection"][:, :, 0]
        disturbance = selection @ self.system["state_cov"][:, :, 0] @ selection.T
        row = design[0]
        state, covariance = self.state, self.covariance
        errors = np.empty(new.size)
        for index, value in enumerate(new):
            error = value - float(row @ state) - obs_intercept
            projected = covariance @ row
            variance = float(row @ projected) + obs_cov
            if not variance > 0.0:
                return None
            gain = projected / variance
            filtered_state = state + gain * error
            filtered_covariance = covariance - np.outer(gain, projected)
            state = transition @ filtered_state + state_intercept
            covariance = transition @ filtered_covariance @ transition.T + disturbance
            covariance = (covariance + covariance.T) / 2.0
            errors[index] = error
        return errors, state, covariance

    def means(self, h: int) -> FloatArray:
        """Forecast means for the ``h`` steps after the end."""
        return np.asarray(means_from_states(self.system, self.state[:, None], h)[0])

    def interval(self, h: int, level: float) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Forecast mean and normal interval at ``level`` for ``h`` steps after the end."""
        mean = self.means(h)
        spread = normal_spread(self.system, self.covariance, h, level)
        return mean, mean - spread, mean + spread


def normal_spread(
    system: dict[str, FloatArray], covariance: FloatArray, h: int, level: float
) -> FloatArray:
    """Half-widths of the normal interval at ``level``, 1..h steps after a predicted state."""
    design, transition, selection, state_cov, obs_cov = (
        system[name][:, :, 0]
        for name in ("design", "transition", "selection", "state_cov", "obs_cov")
    )
    disturbance = selection @ state_cov @ selection.T
    variances = np.empty(h)
    for step in range(h):
        variances[step] = (design @ covariance @ design.T + obs_cov)[0, 0]
        covariance = transition @ covariance @ transition.T + disturbance
    return NormalDist().inv_cdf(0.5 + level / 2.0) * np.sqrt(np.maximum(variances, 0.0))


class ParameterFilter:
    """One fitted model's Kalman filter, run over new windows with the fitted parameters.

    It computes what ``results.model.clone(window).filter(results.params)``
    does (the same to rounding, 1e-9 relative, on time-invariant systems)
    without building a statsmodels model (its specification, SARIMAX set-up
    and results wrapping), which was two thirds of an ARIMA update's filter:
    1.8 ms against 0.5 ms on a 360-point window. The filter's buffers are dropped
    after each run, as ``shed_filter_buffers`` does for a fit: the results
    hold copies of all that is read, and statsmodels would otherwise filter
    the next window's data as the first's.
    """

    def __init__(self, kalman: KalmanFilter) -> None:
        self.kalman = kalman
        self._lock = threading.Lock()

    @classmethod
    def of(cls, results: Any) -> ParameterFilter:
        """The filter of a fitted statsmodels state-space ``results``.

        ValueError when a system matrix varies with time: a window of another
        length would need the model to rebuild it.
        """
        fitted = results.filter_results
        matrices = constant_system(fitted, SYSTEM_MATRICES)
        if matrices is None:
            raise ValueError("the fitted system varies with time")
        kalman = KalmanFilter(
            k_endog=fitted.k_endog,
            k_states=fitted.k_states,
            k_posdef=fitted.k_posdef,
            **matrices,
        )
        ssm = results.model.ssm
        for setting in FILTER_SETTINGS:
            setattr(kalman, setting, getattr(ssm, setting))
        kalman.conserve_memory = UPDATE_STORES_ONLY_PREDICTIONS
        kalman.initialize(ssm.initialization)
        return cls(kalman)

    def run(self, window: FloatArray) -> Any:
        """statsmodels' FilterResults of the filter over ``window``."""
        with self._lock:
            # A copy: bind reshapes the array it is given in place.
            self.kalman.bind(np.array(window, dtype=np.float64))
            filtered = self.kalman.filter()
            # statsmodels keeps the first bound data in its representation
            # cache ("obs" is never refreshed there), so everything built
            # from a run goes: the next window rebuilds it.
            for cache in ("_kalman_filters", "_statespaces", "_representations"):
                getattr(self.kalman, cache).clear()
        return filtered
