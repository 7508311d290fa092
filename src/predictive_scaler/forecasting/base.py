"""The contract every forecasting model follows, and the guarantees it adds.

A model is built unfitted with its hyper-parameters (``__init__`` only),
learns in ``fit(y) -> self`` (fitted attributes end with ``_``) and answers
``predict(h, level) -> Forecast``. Subclasses implement ``_fit`` and
``_predict_mean``; this base class owns what must hold for every model:

* the input is cleaned once (:mod:`.hygiene`);
* a model that cannot fit (too short a series, a numerical failure inside a
  library) or that forecasts non-finite values degrades to the naive
  forecast and says so in ``fallback_reason_`` and in the Forecast's notes,
  so callers never see an exception for bad data;
* intervals come from the model when it has them (override
  ``_predict_interval``), otherwise from its one-step residuals, widening
  with the square root of the step as for a random walk;
* outputs are finite, non-negative and ordered;
* a model sees its load at a magnitude its libraries are built for: a series
  measured in a unit that makes it tiny or huge is divided by a power of two
  (:func:`load_unit`), exactly, and its forecasts multiplied back.
"""

from __future__ import annotations

import functools
import inspect
from abc import ABC, abstractmethod
from collections.abc import Sequence
from statistics import NormalDist
from typing import Any, ClassVar, Self

import numpy as np
from numpy.typing import ArrayLike

from predictive_scaler.forecasting.forecast import FloatArray, Forecast
from predictive_scaler.forecasting.hygiene import MAX_LOAD, clean_series
from predictive_scaler.forecasting.numerics import load_unit, model_numerics


@functools.cache
def init_parameters(model_class: type) -> tuple[str, ...]:
    """Names ``model_class.__init__`` takes; cached, as ``inspect`` costs ~90 us a call."""
    return tuple(
        parameter.name
        for parameter in inspect.signature(model_class).parameters.values()
        if parameter.kind in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY)
    )


class NotFittedError(ValueError, AttributeError):
    """``predict`` was called before ``fit``."""


def normal_quantile(level: float) -> float:
    """Two-sided standard-normal quantile for a central interval at ``level``."""
    return NormalDist().inv_cdf(0.5 + level / 2.0)


def check_level(level: float) -> None:
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level}")


def check_horizon(h: int) -> None:
    if isinstance(h, bool) or not isinstance(h, int | np.integer) or h < 1:
        raise ValueError(f"horizon h must be an integer >= 1, got {h!r}")


def random_walk_scale(h: int) -> FloatArray:
    """sqrt(step) for steps 1..h: how a random walk's spread grows with the horizon."""
    return np.sqrt(np.arange(1, h + 1, dtype=np.float64))


def residual_interval(
    mean: FloatArray, residuals: FloatArray, level: float, step_scale: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Normal interval around ``mean`` from the spread of one-step residuals."""
    finite = residuals[np.isfinite(residuals)]
    sigma = float(np.std(finite, ddof=1)) if finite.size >= 2 else 0.0
    half_width = normal_quantile(level) * sigma * step_scale
    return mean - half_width, mean + half_width


def guarded_means(means: FloatArray, y: FloatArray, origins: Sequence[int]) -> FloatArray:
    """Rows of forecast means as :meth:`ForecastModel.forecast_mean` would give them.

    A row that is not finite becomes the naive forecast from its origin, and
    values are clipped to [0, MAX_LOAD]: for models that forecast every
    origin at once (see :meth:`ForecastModel.rolling_means`).
    """
    table = np.array(means, dtype=np.float64)
    bad = ~np.isfinite(table).all(axis=1)
    if bad.any():
        table[bad] = y[np.asarray(origins)[bad] - 1][:, None]
    return np.clip(table, 0.0, MAX_LOAD)


class ForecastModel(ABC):
    """Base of every registered model; see the module docstring for the contract."""

    # A class attribute; wrappers (see seasonal.py) set a per-instance name.
    name: str
    # Fewer cleaned points than this and the model degrades to naive.
    min_observations: ClassVar[int] = 1
    # Models built on BLAS/OpenMP libraries run with one thread (see
    # model_numerics); pure-numpy ones skip the limit, which would cost them
    # a third of their time.
    uses_thread_pools: ClassVar[bool] = True

    # The series and residuals the model learnt, in units of ``unit_`` (see load_unit).
    y_: FloatArray
    residuals_: FloatArray
    unit_: float = 1.0
    fallback_reason_: str | None
    memoised_mean_: tuple[int, FloatArray] | None = None

    def fit(self, y: ArrayLike) -> Self:
        cleaned = clean_series(y)
        self.unit_ = load_unit(cleaned)
        series = self._in_unit(cleaned)
        self.y_ = series
        self.fallback_reason_ = None
        self.memoised_mean_ = None
        if series.size < self.min_observations:
            self._fall_back(f"{series.size} points, {self.name} needs {self.min_observations}")
            return self
        try:
            # Library numerics (statsmodels, scikit-learn, LAPACK) fail in many
            # ways on degenerate load series; every failure means "use naive".
            with model_numerics(self.uses_thread_pools):
                self.residuals_ = self._fit(series)
        except Exception as error:  # noqa: BLE001 - see comment above
            self._fall_back(f"{self.name} fit failed: {type(error).__name__}: {error}")
        return self

    def update(self, y: ArrayLike) -> Self:
        """Absorb new observations, keeping what the last fit learnt (structure, parameters).

        The cheap path between refits: an ARIMA or ETS model only runs its
        filter over ``y`` with the parameters it already has (milliseconds,
        where a fit costs tens). ``y`` is the whole current window, as for
        ``fit``. An unfitted or degraded model, or a failed update, is fitted
        afresh, so ``update`` is never worse than ``fit`` at keeping the contract.
        """
        if not hasattr(self, "y_") or self.is_degraded:
            return self.fit(y)
        cleaned = clean_series(y)
        if cleaned.size < self.min_observations:
            return self.fit(cleaned)
        # The unit the parameters were learnt in, not the new window's own.
        series = self._in_unit(cleaned)
        self.y_ = series
        self.memoised_mean_ = None
        try:
            with model_numerics(self.uses_thread_pools):
                self.residuals_ = self._update(series)
        except Exception:  # noqa: BLE001 - as in fit(): any library failure means "refit"
            return self.fit(cleaned)
        finally:
            # What _update computed on its way may describe a state it then left.
            self.memoised_mean_ = None
        return self

    def predict(self, h: int, level: float = 0.8) -> Forecast:
        check_horizon(h)
        check_level(level)
        if not hasattr(self, "y_"):
            raise NotFittedError(f"{self.name}: call fit() before predict()")
        h = int(h)
        notes: list[str] = []
        if self.fallback_reason_ is None:
            try:
                with model_numerics(self.uses_thread_pools):
                    mean, lower, upper = self._predict_interval(h, level)
                if not (
                    np.isfinite(mean).all()
                    and np.isfinite(lower).all()
                    and np.isfinite(upper).all()
                ):
                    raise FloatingPointError("non-finite forecast")
            except Exception as error:  # noqa: BLE001 - same reasoning as in fit()
                notes.append(f"{self.name} predict failed ({error}); naive forecast used")
                mean, lower, upper = self._naive_interval(h, level)
        else:
            notes.append(f"naive forecast used: {self.fallback_reason_}")
            mean, lower, upper = self._naive_interval(h, level)
        mean, lower, upper = (self._in_load(values) for values in (mean, lower, upper))
        mean = np.clip(mean, 0.0, MAX_LOAD)
        lower = np.clip(np.minimum(lower, mean), 0.0, MAX_LOAD)
        upper = np.clip(np.maximum(upper, mean), 0.0, MAX_LOAD)
        return Forecast(self.name, mean, lower, upper, level, tuple(notes))

    def forecast_mean(self, h: int) -> FloatArray:
        """``predict(h).mean`` without the interval: all a backtest compares.

        The same guarantees as the mean of :meth:`predict`: the naive forecast
        when the model fell back or its forecast fails or is not finite, and
        values clipped to [0, MAX_LOAD]. An interval costs several times the
        mean for the statsmodels models, and a backtest makes hundreds.
        """
        check_horizon(h)
        if not hasattr(self, "y_"):
            raise NotFittedError(f"{self.name}: call fit() before forecast_mean()")
        h = int(h)
        mean: FloatArray | None = None
        if self.fallback_reason_ is None:
            try:
                mean = self._memoised_mean(h)
            except Exception:  # noqa: BLE001 - same reasoning as in fit()
                mean = None
            if mean is not None and (mean.shape != (h,) or not np.isfinite(mean).all()):
                mean = None
        if mean is None:
            mean = np.full(h, self.y_[-1])
        return np.clip(self._in_load(mean), 0.0, MAX_LOAD)

    def rolling_means(self, y: FloatArray, origins: Sequence[int], horizon: int) -> FloatArray:
        """Forecast means from each origin (rows), this model being fitted on ``y[:origins[0]]``.

        At the later origins the model is only updated (parameters kept), as
        between two refreshes of a ScheduledSelection. ValueError when it
        degrades to naive at an origin, since then it is not the model being
        measured. Models whose update is a filter with fixed parameters
        run it once over the whole series (:meth:`_rolling_means_at_once`).
        """
        if len(origins) and hasattr(self, "y_"):
            at_once = self._rolling_means_at_once(self._in_unit(y), origins, horizon)
            if at_once is not None:
                return np.clip(self._in_load(at_once), 0.0, MAX_LOAD)
        means = np.empty((len(origins), horizon))
        for row, origin in enumerate(origins):
            if row:
                self.update(y[:origin])
            if self.is_degraded:
                raise ValueError(self.fallback_reason_)
            means[row] = self.forecast_mean(horizon)
        return means

    def _rolling_means_at_once(
        self, y: FloatArray, origins: Sequence[int], horizon: int
    ) -> FloatArray | None:
        """:meth:`rolling_means` in one pass over ``y`` (in ``unit_``), or None where it cannot."""
        return None

    def load_residuals(self) -> FloatArray:
        """The one-step residuals in the unit of the load it was given (``residuals_`` are in
        ``unit_``): what a model wrapping this one reads."""
        return self._in_load(self.residuals_)

    def _in_unit(self, load: FloatArray) -> FloatArray:
        """Load values in the unit the model learns in."""
        return load if self.unit_ == 1.0 else np.asarray(load, dtype=np.float64) / self.unit_

    def _in_load(self, values: FloatArray) -> FloatArray:
        """Values the model computed, back in the load's own unit."""
        return values if self.unit_ == 1.0 else np.asarray(values, dtype=np.float64) * self.unit_

    def _memoised_mean(self, h: int) -> FloatArray:
        """``_predict_mean(h)`` as a float array, computed once per fit or update.

        Between two updates a pool member's mean is asked for several times
        (auto's check that its choice still holds, then its forecast and
        band), and each costs a filter's worth of matrix products.
        """
        last = self.memoised_mean_
        if last is not None and last[0] == h:
            return last[1].copy()
        with model_numerics(self.uses_thread_pools):
            mean = np.asarray(self._predict_mean(h), dtype=np.float64)
        self.memoised_mean_ = (h, mean.copy())
        return mean

    @property
    def is_degraded(self) -> bool:
        """True when the last fit fell back to the naive forecast."""
        return self.fallback_reason_ is not None

    @abstractmethod
    def _fit(self, y: FloatArray) -> FloatArray:
        """Learn from the cleaned series; return its one-step residuals."""

    def _update(self, y: FloatArray) -> FloatArray:
        """Take in the new series with the fitted parameters; return one-step residuals."""
        return self._fit(y)

    @abstractmethod
    def _predict_mean(self, h: int) -> FloatArray:
        """Point forecast for steps 1..h."""

    def _predict_interval(self, h: int, level: float) -> tuple[FloatArray, FloatArray, FloatArray]:
        mean = np.asarray(self._predict_mean(h), dtype=np.float64)
        lower, upper = residual_interval(mean, self.residuals_, level, self._step_scale(h))
        return mean, lower, upper

    def _step_scale(self, h: int) -> FloatArray:
        """How the one-step spread grows with the step (random-walk default)."""
        return random_walk_scale(h)

    def _fall_back(self, reason: str) -> None:
        self.fallback_reason_ = reason
        self.residuals_ = np.diff(self.y_)

    def _naive_interval(self, h: int, level: float) -> tuple[FloatArray, FloatArray, FloatArray]:
        mean = np.full(h, self.y_[-1])
        lower, upper = residual_interval(mean, np.diff(self.y_), level, random_walk_scale(h))
        return mean, lower, upper

    def get_params(self) -> dict[str, Any]:
        """The hyper-parameters, as passed to ``__init__`` (scikit-learn style)."""
        return {name: getattr(self, name) for name in init_parameters(type(self))}

    def clone(self) -> Self:
        """A new unfitted model with the same hyper-parameters."""
        return type(self)(**self.get_params())

    def clone_with_fitted_structure(self) -> ForecastModel:
        """A new unfitted model that reuses the structure this fit searched for.

        Backtests refit a model at many origins; a model that searches a
        structure (ARIMA's order) overrides this so the search runs once.
        """
        return self.clone()

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({params})"
