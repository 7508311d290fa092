"""Grey GM(1,1) and the grey + exponential-smoothing combination (design.md section 2)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from predictive_scaler.forecasting.base import ForecastModel
from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.forecasting.models.smoothing import Brown

# The precision grades of grey theory: (grade, max posterior error ratio C,
# min small-error probability P), best first.
PRECISION_GRADES = (("good", 0.35, 0.95), ("qualified", 0.5, 0.80), ("barely", 0.65, 0.70))
# |a| below this makes GM(1,1)'s exponential response numerically a straight line.
LINEAR_DEVELOPMENT = 1e-9


@dataclass(frozen=True)
class GreyFit:
    """GM(1,1) fitted on one window: development coefficient a, grey input b."""

    a: float
    b: float
    first: float
    size: int

    def accumulated(self, k: FloatArray) -> FloatArray:
        """Time response x1^(k+1) for 0-based steps k."""
        if abs(self.a) < LINEAR_DEVELOPMENT:
            return self.first + self.b * k
        ratio = self.b / self.a
        return (self.first - ratio) * np.exp(-self.a * k) + ratio

    def restored(self, k: FloatArray) -> FloatArray:
        """x0^(k+1) = x1^(k+1) - x1^(k), with x0^(1) = x0_1."""
        values = self.accumulated(k) - self.accumulated(k - 1.0)
        return np.where(k == 0, self.first, values)


def fit_gm11(x0: FloatArray) -> GreyFit:
    """Least squares of x0_k = -a*z_k + b on the background values z."""
    x1 = np.cumsum(x0)
    background = (x1[1:] + x1[:-1]) / 2.0
    design = np.column_stack([-background, np.ones_like(background)])
    (a, b), *_ = np.linalg.lstsq(design, x0[1:], rcond=None)
    return GreyFit(float(a), float(b), float(x0[0]), int(x0.size))


def precision_grade(posterior_error_ratio: float, small_error_probability: float) -> str:
    for grade, max_ratio, min_probability in PRECISION_GRADES:
        if posterior_error_ratio <= max_ratio and small_error_probability >= min_probability:
            return grade
    return "unqualified"


class GM11(ForecastModel):
    """Grey GM(1,1) on the last ``window`` points (small-sample modelling).

    Fitted attributes: ``a_``, ``b_``, the precision test
    ``posterior_error_ratio_`` (C) and ``small_error_probability_`` (P), and
    ``precision_grade_`` ("good" when C <= 0.35 and P >= 0.95).
    """

    name = "gm11"
    uses_thread_pools = False
    min_observations = 4

    def __init__(self, window: int = 8) -> None:
        if window < 4:
            raise ValueError(f"GM(1,1) needs a window of at least 4 points, got {window}")
        self.window = window

    def _fit(self, y: FloatArray) -> FloatArray:
        x0 = y[-self.window :]
        self.grey_ = fit_gm11(x0)
        self.a_, self.b_ = self.grey_.a, self.grey_.b
        steps = np.arange(x0.size, dtype=np.float64)
        residuals = x0 - self.grey_.restored(steps)
        spread = float(np.std(x0))
        if spread == 0.0:
            self.posterior_error_ratio_, self.small_error_probability_ = 0.0, 1.0
        else:
            self.posterior_error_ratio_ = float(np.std(residuals) / spread)
            deviation = np.abs(residuals - residuals.mean())
            self.small_error_probability_ = float(np.mean(deviation < 0.6745 * spread))
        self.precision_grade_ = precision_grade(
            self.posterior_error_ratio_, self.small_error_probability_
        )
        # x0_1 is reproduced by construction; its zero residual says nothing.
        return residuals[1:]

    def _predict_mean(self, h: int) -> FloatArray:
        steps = np.arange(self.grey_.size, self.grey_.size + h, dtype=np.float64)
        return self.grey_.restored(steps)


class GreyExponentialSmoothing(ForecastModel):
    """Exponential smoothing for normal load, GM(1,1) for bursts.

    Brown's smoothing forecasts each point one step ahead; a point whose
    error, relative to the actual value, exceeds ``burst_threshold`` is a
    burst. The burst values, in order, form their own series modelled by
    GM(1,1). While the load is in a burst (the latest point is one) and at
    least four bursts were seen, the grey forecast replaces smoothing's.
    """

    name = "grey_es"
    uses_thread_pools = False
    min_observations = 3

    def __init__(self, alpha: float = 0.5, burst_threshold: float = 0.2, window: int = 8) -> None:
        if burst_threshold <= 0.0:
            raise ValueError(f"burst_threshold must be > 0, got {burst_threshold}")
        self.alpha = alpha
        self.burst_threshold = burst_threshold
        self.window = window

    def _fit(self, y: FloatArray) -> FloatArray:
        self.smoothing_ = Brown(self.alpha).fit(y)
        smoothing_residuals = self.smoothing_.residuals_
        # Relative to the actual value; a zero actual counts as a tiny one.
        relative_error = np.abs(smoothing_residuals) / np.maximum(y[1:], 1e-9)
        bursts = np.concatenate([[False], relative_error > self.burst_threshold])
        self.burst_mask_ = bursts
        self.burst_values_ = y[bursts]
        self.grey_: GM11 | None = None
        if bursts[-1] and self.burst_values_.size >= GM11.min_observations:
            grey = GM11(self.window).fit(self.burst_values_)
            self.grey_ = None if grey.is_degraded else grey
        self.in_burst_ = self.grey_ is not None
        return smoothing_residuals

    def _predict_mean(self, h: int) -> FloatArray:
        if self.grey_ is not None:
            return self.grey_._predict_mean(h)
        return self.smoothing_._predict_mean(h)
