"""Gradient-boosted trees on lag and time-of-day features."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from sklearn.ensemble import GradientBoostingRegressor

from predictive_scaler.forecasting.base import ForecastModel, guarded_means
from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.forecasting.numerics import model_numerics

# What _fit returns while the holdout residuals are not computed yet.
_PENDING: FloatArray = np.empty(0)


class GradientBoostedTrees(ForecastModel):
    """scikit-learn gradient boosting, forecasting recursively one step at a time.

    Trees cannot extrapolate beyond the values they were trained on, so they
    learn the next *change* from the last ``lags`` changes, plus the phase in
    the season (sin/cos of the time of day) when ``season_length`` is given.
    One-step residuals for the interval come from a time-ordered holdout
    (the last ``holdout`` share), since in-sample tree residuals are
    optimistic; the model is then refitted on everything.
    """

    name = "gbdt"
    min_observations = 30

    def __init__(
        self,
        *,
        lags: int = 12,
        season_length: int | None = None,
        n_estimators: int = 50,
        max_depth: int = 3,
        learning_rate: float = 0.1,
        holdout: float = 0.2,
        random_state: int = 0,
        max_window: int = 1000,
    ) -> None:
        if lags < 1:
            raise ValueError(f"lags must be >= 1, got {lags}")
        if not 0.0 < holdout < 1.0:
            raise ValueError(f"holdout must lie in (0, 1), got {holdout}")
        self.lags = lags
        self.season_length = season_length
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.learning_rate = learning_rate
        self.holdout = holdout
        self.random_state = random_state
        self.max_window = max_window

    def _phase_features(self, positions: FloatArray) -> FloatArray:
        if not self.season_length:
            return np.empty((positions.size, 0))
        angle = 2.0 * np.pi * positions / self.season_length
        return np.column_stack([np.sin(angle), np.cos(angle)])

    def _regressor(self) -> GradientBoostingRegressor:
        return GradientBoostingRegressor(
            n_estimators=self.n_estimators,
            max_depth=self.max_depth,
            learning_rate=self.learning_rate,
            random_state=self.random_state,
        )

    def _fit(self, y: FloatArray) -> FloatArray:
        window = y[-self.max_window :]
        self.offset_ = y.size - window.size
        changes = np.diff(window)
        if changes.size <= self.lags + 10:
            raise ValueError(f"{window.size} points are too few for {self.lags} lags")
        lag_rows = sliding_window_view(changes[:-1], self.lags)[:, ::-1]
        targets = changes[self.lags :]
        # Position (in the whole series) of the value each target leads to.
        positions = self.offset_ + np.arange(self.lags + 1, window.size, dtype=np.float64)
        features = np.column_stack([lag_rows, self._phase_features(positions)])
        self.regressor_ = self._regressor().fit(features, targets)
        self.recent_changes_ = changes[-self.lags :]
        self.holdout_rows_: tuple[FloatArray, FloatArray] | None = (features, targets)
        return _PENDING

    @property
    def residuals_(self) -> FloatArray:
        """One-step residuals on the holdout, fitted when first read.

        The holdout fit costs as much as the model's own, and a backtest never
        reads them (auto's band comes from the backtest errors): a selection
        fits each tree model once instead of twice.
        """
        if getattr(self, "holdout_rows_", None) is not None:
            features, targets = self.holdout_rows_  # type: ignore[misc]
            split = int(len(targets) * (1.0 - self.holdout))
            with model_numerics():
                probe = self._regressor().fit(features[:split], targets[:split])
                residuals = targets[split:] - probe.predict(features[split:])
            self.one_step_residuals_ = np.asarray(residuals, dtype=np.float64)
            self.holdout_rows_ = None
        return self.one_step_residuals_

    @residuals_.setter
    def residuals_(self, value: FloatArray) -> None:
        if value is not _PENDING:
            self.holdout_rows_ = None
        self.one_step_residuals_ = value

    def _update(self, y: FloatArray) -> FloatArray:
        # The trees stay; only the lags they read move to the new end.
        window = y[-self.max_window :]
        self.offset_ = y.size - window.size
        self.recent_changes_ = np.diff(window)[-self.lags :]
        return self.one_step_residuals_

    def _rolling_means_at_once(
        self, y: FloatArray, origins: Sequence[int], horizon: int
    ) -> FloatArray | None:
        # An update only moves the lags to the new end, so every origin's
        # recursion can run at once: one predict per step instead of per origin.
        if self.is_degraded or self.y_.size != origins[0]:
            return None
        ends = np.asarray(origins)
        changes = np.diff(y)
        history = np.array([changes[end - 1 - self.lags : end - 1] for end in ends])
        levels = y[ends - 1].astype(np.float64)
        means = np.empty((ends.size, horizon))
        for step in range(horizon):
            positions = (ends + step).astype(np.float64)
            rows = np.column_stack(
                [history[:, ::-1][:, : self.lags], self._phase_features(positions)]
            )
            change = np.asarray(self.regressor_.predict(rows), dtype=np.float64)
            levels = levels + change
            means[:, step] = levels
            history = np.column_stack([history, change])
        return guarded_means(means, y, origins)

    def _predict_mean(self, h: int) -> FloatArray:
        changes = list(self.recent_changes_)
        level = float(self.y_[-1])
        forecast = np.empty(h)
        for step in range(h):
            position = np.array([float(self.y_.size + step)])
            row = np.concatenate([changes[-self.lags :][::-1], self._phase_features(position)[0]])
            change = float(self.regressor_.predict(row.reshape(1, -1))[0])
            level += change
            changes.append(change)
            forecast[step] = level
        return forecast
