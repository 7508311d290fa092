"""Baselines every other model must beat: the last value, and the last season."""

from __future__ import annotations

import numpy as np

from predictive_scaler.forecasting.base import ForecastModel
from predictive_scaler.forecasting.forecast import FloatArray


class Naive(ForecastModel):
    """Tomorrow looks like today: repeat the last observation."""

    name = "naive"
    uses_thread_pools = False

    def _fit(self, y: FloatArray) -> FloatArray:
        return np.diff(y)

    def _predict_mean(self, h: int) -> FloatArray:
        return np.full(h, self.y_[-1])


class SeasonalNaive(ForecastModel):
    """Repeat the last full season; without a season (or enough history) it is naive."""

    name = "seasonal_naive"
    uses_thread_pools = False

    def __init__(self, season_length: int | None = None) -> None:
        if season_length is not None and season_length < 1:
            raise ValueError(f"season_length must be >= 1, got {season_length}")
        self.season_length = season_length

    def _fit(self, y: FloatArray) -> FloatArray:
        self.period_ = self.season_length or 1
        if y.size <= self.period_:
            # Not one full season seen yet: the last value is all we know.
            self.period_ = 1
        return y[self.period_ :] - y[: -self.period_] if y.size > self.period_ else np.diff(y)

    def _predict_mean(self, h: int) -> FloatArray:
        last_season = self.y_[-self.period_ :]
        return np.asarray(last_season[np.arange(h) % self.period_], dtype=np.float64)

    def _step_scale(self, h: int) -> FloatArray:
        # Each further season adds one season's worth of uncertainty.
        return np.sqrt(np.arange(h, dtype=np.float64) // self.period_ + 1.0)
