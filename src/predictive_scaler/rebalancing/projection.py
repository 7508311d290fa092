"""Node usage a few minutes ahead, so rebalancing acts before a node gets hot.

A node whose load is climbing is treated as already carrying its forecast
peak: it is drained before it crosses the threshold, and it is not picked as a
destination just before it peaks. The forecast never lowers the usage below
what is measured now: a falling forecast must not hide a hot node.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from predictive_scaler.forecasting import make_model
from predictive_scaler.forecasting.hygiene import clean_series

# Few points and a cheap model: this runs for every node on every cycle.
MIN_POINTS = 6


def projected_usage(history: ArrayLike, horizon: int, *, model: str = "holt") -> float:
    """max(latest sample, forecast mean over `horizon` steps); NaN-only history gives NaN."""
    values = np.asarray(history, dtype=float)
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return float("nan")
    latest = float(finite[-1])
    if finite.size < MIN_POINTS or horizon < 1:
        return latest
    try:
        forecast = make_model(model).fit(clean_series(values)).predict(horizon, 0.8)
    except (ValueError, ArithmeticError):
        return latest
    return max(latest, float(forecast.mean.max()))
