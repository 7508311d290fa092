"""Prediction intervals from a model's own out-of-sample errors (split conformal).

A model's textbook interval assumes its errors are what its equations say;
load is burstier than that, and a union of several such bands (what auto
used to do) is wider than any of them needs to be. The errors a model made
on data it had not seen say directly how far off it is: the interval at
level p is the forecast plus the (1-p)/2 and (1+p)/2 quantiles of those
errors, per horizon step where there are enough of them, else pooled over
the steps on a square-root-of-the-step scale.
"""

from __future__ import annotations

import math

import numpy as np

from predictive_scaler.forecasting.base import random_walk_scale
from predictive_scaler.forecasting.forecast import FloatArray

# Fewer errors than this per step and the steps are pooled.
MIN_ERRORS_PER_STEP = 30
# Fewer errors than this in all and the model's own interval stands.
MIN_ERRORS = 10


def _quantiles(errors: FloatArray, level: float) -> tuple[float, float]:
    """Finite-sample conformal quantiles: rank ceil((n+1)(1+p)/2) of n, at most the largest."""
    n = errors.size
    rank = min(1.0, math.ceil((n + 1) * (1.0 + level) / 2.0) / n)
    low_rank = 1.0 - rank
    low, high = np.quantile(errors, [low_rank, rank], method="inverted_cdf")
    return float(low), float(high)


def conformal_offsets(errors: FloatArray, h: int, level: float) -> tuple[FloatArray, FloatArray]:
    """Offsets (lower, upper) to add to a forecast of ``h`` steps, from errors (rows x steps).

    ``errors`` are actual - forecast, one row per forecast, one column per
    step ahead, NaN where the actual is not known yet. Raises ValueError when
    there are too few to say anything (fewer than MIN_ERRORS).
    """
    table = np.asarray(errors, dtype=np.float64)
    if table.ndim != 2 or np.isfinite(table).sum() < MIN_ERRORS:
        raise ValueError("too few out-of-sample errors to calibrate an interval")
    steps = table.shape[1]
    scale = random_walk_scale(steps)
    pooled = (table / scale)[np.isfinite(table)]
    pooled_low, pooled_high = _quantiles(pooled, level)
    growth = random_walk_scale(h)
    lower, upper = pooled_low * growth, pooled_high * growth
    for step in range(min(h, steps)):
        column = table[:, step][np.isfinite(table[:, step])]
        if column.size >= MIN_ERRORS_PER_STEP:
            lower[step], upper[step] = _quantiles(column, level)
    # Further out than any error seen, or noisier per-step quantiles: never
    # narrower than the step before (uncertainty does not shrink with time).
    return np.minimum.accumulate(np.minimum(lower, 0.0)), np.maximum.accumulate(
        np.maximum(upper, 0.0)
    )
