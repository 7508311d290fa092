"""``auto``: a fixed pool's mean when it holds up in a backtest, else the best-backtesting model."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from predictive_scaler.forecasting.base import ForecastModel
from predictive_scaler.forecasting.calibration import conformal_offsets
from predictive_scaler.forecasting.catalog import make_base_model
from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.forecasting.metrics import DEFAULT_UNDER_WEIGHT
from predictive_scaler.forecasting.models.baseline import Naive
from predictive_scaler.forecasting.selection import (
    ModelSelection,
    RankedModel,
    beyond_range,
    select_model,
)

__all__ = ["Auto", "ModelSelection", "RankedModel", "select_model"]

# A forecast more than this many times the history's peak is taken as a broken model.
ABSURD_GROWTH = 10.0
# The window's typical range, for the final forecast's check: these percentiles of it.
TYPICAL_PERCENTILES = (5.0, 95.0)


def leaves_typical_range(y: FloatArray, forecast: FloatArray) -> bool:
    """Whether ``forecast`` goes a typical span or more beyond the typical range of ``y``.

    The backtest's guard (:func:`~predictive_scaler.forecasting.selection.select_model`)
    measures the range from the window's extremes; on spiky load a spike
    is the extreme, and a model that learnt to forecast spikes (a tree on
    lags, seen forecasting 843 for a load of 20 under spikes of 3,000)
    stays inside it. Between the 5th and 95th percentiles, spikes (a few per
    cent of the points) are out; the last value is in, since a level shift
    at the window's end is the load, not an outlier.
    """
    low, high = np.percentile(y, TYPICAL_PERCENTILES)
    return beyond_range(forecast, min(float(low), float(y[-1])), max(float(high), float(y[-1])))


class Auto(ForecastModel):
    """Backtest-based model selection with fallback (see :func:`select_model`).

    Fitted attributes: ``selection_`` (the ranking), ``chosen_`` (the model
    in use), ``model_`` (it, fitted), ``backtest_errors_`` (score per
    candidate, inf for those that failed) and ``skipped_`` (ranked models
    passed over at this fit, with why). Its interval is calibrated on the
    chosen model's backtest errors (split conformal, :mod:`.calibration`).
    """

    name = "auto"

    def __init__(
        self,
        *,
        candidates: Sequence[str] | None = None,
        horizon: int = 5,
        n_origins: int = 16,
        season_length: int | None = None,
        under_weight: float = DEFAULT_UNDER_WEIGHT,
        selection: ModelSelection | None = None,
    ) -> None:
        if horizon < 1 or n_origins < 1:
            raise ValueError("horizon and n_origins must be >= 1")
        for candidate in candidates or ():
            make_base_model(candidate, season_length=season_length)  # fail fast on a bad name
        self.candidates = None if candidates is None else tuple(candidates)
        self.horizon = horizon
        self.n_origins = n_origins
        self.season_length = season_length
        self.under_weight = under_weight
        self.selection = selection

    def _fit(self, y: FloatArray) -> FloatArray:
        # Selections are made on the load as it came, here as in refresh.py,
        # so that one can be passed back (``selection=``) whatever the unit.
        self.selection_ = self.selection or select_model(
            self._in_load(y),
            candidates=self.candidates,
            horizon=self.horizon,
            n_origins=self.n_origins,
            season_length=self.season_length,
            under_weight=self.under_weight,
        )
        self.backtest_errors_ = self.selection_.scores
        self.skipped_: list[tuple[str, str]] = []
        for ranked in self.selection_.ranking:
            model = ranked.template.clone().fit(y)
            reason = self._unusable(model, y)
            if reason is None:
                self.model_, self.chosen_ = model, ranked.name
                # The backtest's errors are in the load's unit; the band is built in unit_.
                self.chosen_errors_ = self._in_unit(ranked.errors)
                return model.load_residuals()
            self.skipped_.append((ranked.name, reason))
        self.model_, self.chosen_ = Naive().fit(y), "naive"
        self.chosen_errors_ = np.empty((0, 1))
        return self.model_.load_residuals()

    def _unusable(self, model: ForecastModel, y: FloatArray) -> str | None:
        """Why a fitted candidate cannot be used on ``y``, or None when it can."""
        if model.fallback_reason_ is not None:
            return model.fallback_reason_
        # Its mean only: auto's band comes from the backtest errors, not from it.
        try:
            mean = model._memoised_mean(self.selection_.horizon)
        except Exception as error:  # noqa: BLE001 - as in ForecastModel.predict
            return f"{model.name} predict failed ({error})"
        if not np.isfinite(mean).all():
            return f"{model.name} forecasts non-finite values"
        peak = float(y.max())
        if peak > 0.0 and mean.max() > ABSURD_GROWTH * peak:
            return f"forecast {mean.max():.4g} is over {ABSURD_GROWTH:g}x the peak"
        if leaves_typical_range(y, mean):
            return f"forecast {mean.max():.4g} leaves the window's typical range"
        return None

    def _update(self, y: FloatArray) -> FloatArray:
        # The chosen model keeps its parameters; if it no longer holds up on
        # the new data, walk the ranking again as a fit would.
        self.model_.update(y)
        if self._unusable(self.model_, y) is not None:
            return self._fit(y)
        return self.model_.load_residuals()

    def _predict_mean(self, h: int) -> FloatArray:
        return self.model_.forecast_mean(h)

    def _predict_interval(self, h: int, level: float) -> tuple[FloatArray, FloatArray, FloatArray]:
        # Calibrated on the chosen model's backtest errors (see calibration.py),
        # not widened to the union with its own textbook band.
        try:
            low, high = conformal_offsets(self.chosen_errors_, h, level)
        except ValueError:
            own = self.model_.predict(h, level)
            return own.mean, own.lower, own.upper
        mean = self.model_.forecast_mean(h)
        return mean, mean + low, mean + high

    def describe(self) -> str:
        """One line for logs and status: which model, and how the others scored."""
        scores = ", ".join(f"{name} {score:.3g}" for name, score in self.backtest_errors_.items())
        return f"auto chose {self.chosen_} (backtest error: {scores})"
