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
from collections import deque
from dataclasses import dataclass

import numpy as np

from predictive_scaler.forecasting.base import random_walk_scale
from predictive_scaler.forecasting.forecast import FloatArray

# Fewer errors than this per step and the steps are pooled.
MIN_ERRORS_PER_STEP = 30
# Fewer errors than this in all and the model's own interval stands.
MIN_ERRORS = 10


def conformal_quantiles(errors: FloatArray, level: float) -> tuple[float, float]:
    """Finite-sample conformal quantiles: rank ceil((n+1)(1+p)/2) of n, at most the largest."""
    n = errors.size
    rank = min(1.0, math.ceil((n + 1) * (1.0 + level) / 2.0) / n)
    # np.quantile(errors, [1 - rank, rank], method="inverted_cdf"), the same
    # float arithmetic to the index, read from a partition: a tenth of its
    # cost, and a band asks for these at every step of every update.
    low, high = (min(max(math.ceil(n * q - 1.0), 0), n - 1) for q in (1.0 - rank, rank))
    ordered = np.partition(errors, (low, high))
    return float(ordered[low]), float(ordered[high])


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
    pooled_low, pooled_high = conformal_quantiles(pooled, level)
    growth = random_walk_scale(h)
    lower, upper = pooled_low * growth, pooled_high * growth
    for step in range(min(h, steps)):
        column = table[:, step][np.isfinite(table[:, step])]
        if column.size >= MIN_ERRORS_PER_STEP:
            lower[step], upper[step] = conformal_quantiles(column, level)
    # Further out than any error seen, or noisier per-step quantiles: never
    # narrower than the step before (uncertainty does not shrink with time).
    return np.minimum.accumulate(np.minimum(lower, 0.0)), np.maximum.accumulate(
        np.maximum(upper, 0.0)
    )


# Live errors kept per forecaster: about a day of 5-minute evaluations, or
# three hours of 1-minute ones; old enough errors describe another load.
LIVE_ERRORS_KEPT = 300


@dataclass(frozen=True)
class _Made:
    """A forecast made when the newest sample had index ``last`` (in steps of the clock)."""

    last: int
    mean: FloatArray


class LiveErrors:
    """Errors of the forecasts actually made, as their actuals arrive ("updated as errors come").

    Each forecast is kept until every step of it has been observed, then
    becomes one row of errors (actual - forecast). Steps are indexed on the
    series' clock (``end_time / step``), so evaluations that skip or repeat a
    step still line up.
    """

    def __init__(self, kept: int = LIVE_ERRORS_KEPT) -> None:
        self._pending: deque[_Made] = deque(maxlen=kept)
        self._rows: deque[FloatArray] = deque(maxlen=kept)

    def observe(self, values: FloatArray, last: int) -> None:
        """Score pending forecasts against ``values``, whose newest sample has index ``last``."""
        still: deque[_Made] = deque(maxlen=self._pending.maxlen)
        offset = values.size - 1 - last  # index in values of clock step 0
        for made in self._pending:
            first, steps = made.last + 1, made.mean.size
            if first + steps - 1 > last:
                still.append(made)
                continue
            start = first + offset
            if start < 0:
                continue  # its actuals fell out of the window
            actual = values[start : start + steps]
            self._rows.append(np.asarray(actual - made.mean, dtype=np.float64))
        self._pending = still

    def record(self, mean: FloatArray, last: int) -> None:
        """Keep a forecast made at ``last``; it replaces one made before at the same step.

        A step's forecast is scored once: one remade on the same newest
        sample (a revised value, a longer horizon) supersedes the earlier one.
        """
        if self._pending and self._pending[-1].last == last:
            self._pending.pop()
        self._pending.append(_Made(last, np.array(mean, dtype=np.float64)))

    def table(self, steps: int) -> FloatArray:
        """Rows of errors for ``steps`` steps (NaN where a row is shorter)."""
        table = np.full((len(self._rows), steps), np.nan)
        for row, errors in enumerate(self._rows):
            width = min(steps, errors.size)
            table[row, :width] = errors[:width]
        return table

    def __len__(self) -> int:
        return len(self._rows)
