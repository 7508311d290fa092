"""The hindsight reference: the best linear forecast of the load from its own past.

The clairvoyant reference (:func:`.forecasts.clairvoyant_table`) reads the
load's course from the future, so it shows what the policy would buy with
knowledge no forecaster has. This one asks the question a target needs
answered: what could any forecaster of the load's own past buy? Each step
ahead is forecast by a least-squares fit of the samples the decision sees
(the last hour of them, and the steps around the same time a day earlier
when the slice holds a day before), fitted once on the whole slice it is
scored on. Its coefficients have seen every step they forecast, so no
linear rule of these samples with the same coefficients throughout has a
smaller mean squared error on the slice; it flatters itself, as a bound
should. (A model refitted as it goes, as the operator's are, is linear with
coefficients that change; where it beats this one, it is by adapting.)
Its band is calibrated like
the operator's, from the errors it made on the last steps already observed.
Replayed through the same policy, it shows how much of a target's gap a
better forecaster could close.
"""

from __future__ import annotations

import numpy as np

from predictive_scaler.forecasting.calibration import (
    LIVE_ERRORS_KEPT,
    MIN_ERRORS,
    conformal_quantiles,
)
from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.forecasting.hygiene import clean_series
from predictive_scaler.simulation.forecasts import ForecastTable

# The recent samples each forecast reads: an hour of them (60 at one a minute,
# 12 at one every 5 minutes), as many as a short slice can fit without
# fitting its noise.
RECENT_SECONDS = 3600.0
DAY_SECONDS = 86_400.0
# The steps either side of the same time a day earlier that a forecast reads.
DAY_NEIGHBOURS = 5
NAME = "hindsight"


def hindsight_table(
    load: FloatArray,
    *,
    start: int,
    horizon: int,
    level: float,
    step_seconds: float,
    kept: int = LIVE_ERRORS_KEPT,
) -> ForecastTable:
    """The least-squares forecast of each step ahead, fitted in hindsight on the slice.

    Row ``t - start`` forecasts steps ``t..t+horizon-1`` from the samples before ``t``
    (missing ones filled from their neighbours); rows with a day behind them also read
    the day before, and are fitted apart from those without.
    """
    rows = load.size - start
    if rows <= 0:
        raise ValueError(f"the trace has {load.size} steps; the table starts at step {start}")
    filled = clean_series(load)
    decided = start + np.arange(rows)
    lags = max(1, min(round(RECENT_SECONDS / step_seconds), start))
    day = round(DAY_SECONDS / step_seconds)
    # The day-before neighbourhood must lie before the decision at every step ahead.
    daily = decided - day - DAY_NEIGHBOURS >= 0 if day > horizon + DAY_NEIGHBOURS else None
    mean = np.full((rows, horizon), np.nan)
    for ahead in range(horizon):
        target = decided + ahead
        actual = np.full(rows, np.nan)
        inside = target < load.size
        actual[inside] = load[target[inside]]
        recent = filled[decided[:, None] - 1 - np.arange(lags)[None, :]]
        if daily is None:
            mean[:, ahead] = _fitted(recent, actual)
            continue
        before = target[daily, None] - day + np.arange(-DAY_NEIGHBOURS, DAY_NEIGHBOURS + 1)
        with_day = np.hstack([recent[daily], filled[before]])
        mean[daily, ahead] = _fitted(with_day, actual[daily])
        mean[~daily, ahead] = _fitted(recent[~daily], actual[~daily])
    mean, lower, upper = _calibrated(np.clip(mean, 0.0, None), load, decided, level, kept)
    return ForecastTable(start, step_seconds, level, mean, lower, upper, (NAME,) * rows)


def _fitted(inputs: FloatArray, actual: FloatArray) -> FloatArray:
    """Least squares of ``actual`` on ``inputs`` and a constant, over the rows it is known on."""
    design = np.hstack([np.ones((inputs.shape[0], 1)), inputs])
    known = np.isfinite(actual)
    if not known.any():
        return np.full(inputs.shape[0], np.nan)
    coefficients, *_ = np.linalg.lstsq(design[known], actual[known], rcond=None)
    return np.asarray(design @ coefficients, dtype=np.float64)


def _calibrated(
    mean: FloatArray, load: FloatArray, decided: np.ndarray, level: float, kept: int
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """The mean and a band per row from the errors of the last ``kept`` forecasts already observed.

    A row without MIN_ERRORS errors at each step has no forecast (NaN), as the
    clairvoyant's first rows have none.
    """
    rows, horizon = mean.shape
    target = decided[:, None] + np.arange(horizon)[None, :]
    actual = np.full(mean.shape, np.nan)
    inside = target < load.size
    actual[inside] = load[target[inside]]
    errors = actual - mean
    lower, upper = np.full(mean.shape, np.nan), np.full(mean.shape, np.nan)
    for row in range(rows):
        for ahead in range(horizon):
            # The forecast made ahead + 1 rows back is the newest whose actual is observed.
            newest = row - ahead - 1
            past = errors[max(0, newest - kept + 1) : max(0, newest + 1), ahead]
            past = past[np.isfinite(past)]
            if past.size < MIN_ERRORS:
                break
            low, high = conformal_quantiles(past, level)
            lower[row, ahead] = max(mean[row, ahead] + min(low, 0.0), 0.0)
            upper[row, ahead] = mean[row, ahead] + max(high, 0.0)
    missing = ~np.isfinite(upper).all(axis=1)
    mean = mean.copy()
    mean[missing] = np.nan
    return mean, lower, upper
