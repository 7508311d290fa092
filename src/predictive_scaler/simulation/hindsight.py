"""The hindsight reference: the least-squares forecast of the load from its own recent past.

The clairvoyant reference (:func:`.forecasts.clairvoyant_table`) reads the
load's course from the future, so it shows what the policy would buy with
knowledge no forecaster has. This one asks a nearer question: what would a
forecaster of the load's own past buy that had learnt, with hindsight, how
this trace follows its past? Each step ahead is forecast by least squares on
samples the decision sees: the last hour of them (at most MAX_LAGS, fewer on
a short trace) for every decision, and, for the decisions with a whole day
behind them, also the steps around the same time a day earlier, each set of
coefficients fitted on the whole trace. On the rows it was fitted on, no
linear rule of those inputs with fixed coefficients has a smaller mean
squared error. It is a reference, not a bound: the policy's cost also
depends on the band and the budget's threshold, and a model refitted as it
goes, as the operator's are, can do better by adapting, or by reading more
than an hour. Its band comes from the errors of its last forecasts whose
steps were all observed, by the operator's own conformal rule
(:func:`..forecasting.calibration.conformal_offsets`); they are errors on
rows it was fitted on, so with ten rows per coefficient the band is a few
per cent narrower than out-of-sample errors would make it.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from predictive_scaler.forecasting.calibration import LIVE_ERRORS_KEPT, conformal_offsets
from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.forecasting.hygiene import carried_forward
from predictive_scaler.simulation.forecasts import ForecastTable

HINDSIGHT = "hindsight"
# The recent samples each forecast reads: an hour of them (60 at one a minute, 12 at one
# every 5 minutes), at most MAX_LAGS, fewer when the trace is too short to fit that many.
RECENT_SECONDS = 3600.0
# Half an hour at 15-second steps; more columns and a fit's QR grows with their square.
MAX_LAGS = 120
DAY_SECONDS = 86_400.0
# The steps either side of the same time a day earlier that a forecast reads.
DAY_NEIGHBOURS = 5
# Rows a fit needs per coefficient, counted on its last step ahead's known targets: with
# as many rows as coefficients least squares passes through every target, noise and all.
ROWS_PER_COEFFICIENT = 10
# Rows of inputs built at a time, so that a month of 15-second samples does not hold a
# design matrix of gigabytes.
CHUNK_ROWS = 8192


class HindsightUnavailableError(ValueError):
    """The trace cannot carry a hindsight fit (too short, or no finite sample)."""


def hindsight_table(
    load: FloatArray,
    *,
    start: int,
    horizon: int,
    level: float,
    step_seconds: float,
    kept: int = LIVE_ERRORS_KEPT,
) -> ForecastTable:
    """The least-squares forecast of each step ahead, fitted in hindsight on the trace.

    Row ``t - start`` forecasts steps ``t..t+horizon-1`` from the samples before ``t``
    (a missing one reads as the newest sample before it). The fit and its errors run
    from the first decision with a whole window of observed samples behind it, history
    included, so the band of the first scored rows is calibrated already, as the
    clairvoyant's is. HindsightUnavailableError when the trace is too short for a fit.
    """
    if not 1 <= start < load.size:
        raise ValueError(f"the trace has {load.size} steps; the table starts at step {start}")
    if horizon < 1:
        raise ValueError(f"the horizon must be at least one step, got {horizon}")
    observed, first_seen = _carried_forward(load)
    targets = _targets(load, horizon)
    hour = max(1, round(RECENT_SECONDS / step_seconds))
    lags = min(hour, MAX_LAGS, start)
    # Fewer lags until the rows whose window was observed can fit them.
    while lags > 0 and _rows(targets, first_seen + lags) < ROWS_PER_COEFFICIENT * (1 + lags):
        lags -= 1
    if lags < 1:
        raise HindsightUnavailableError(
            f"{load.size} steps are too few to fit a hindsight forecast"
        )
    recent = _Inputs(observed, lags, None)
    mean = np.full(targets.shape, np.nan)
    first = first_seen + lags
    mean[first:] = _fitted(recent, np.arange(first, load.size), targets)
    day = _day(round(DAY_SECONDS / step_seconds), horizon)
    if day is not None:
        with_day = _Inputs(observed, lags, day)
        behind = max(first, with_day.first_behind)
        if _rows(targets, behind) >= ROWS_PER_COEFFICIENT * with_day.width:
            mean[behind:] = _fitted(with_day, np.arange(behind, load.size), targets)
    mean = np.clip(mean, 0.0, None)
    errors = targets - mean
    lower, upper = np.full(mean.shape, np.nan), np.full(mean.shape, np.nan)
    for decision in range(start, load.size):
        # The newest forecast with every step observed was made ``horizon`` steps back.
        newest = decision - horizon
        window = errors[max(0, newest - kept + 1) : max(0, newest + 1)]
        try:
            low, high = conformal_offsets(window, horizon, level)
        except ValueError:
            continue  # too few errors yet
        lower[decision] = np.clip(mean[decision] + low, 0.0, None)
        upper[decision] = mean[decision] + high
    mean[~np.isfinite(upper).all(axis=1)] = np.nan
    rows = load.size - start
    return ForecastTable(
        start, step_seconds, level, mean[start:], lower[start:], upper[start:], (HINDSIGHT,) * rows
    )


class _Inputs:
    """What the decision at step ``d`` reads: a constant, the ``lags`` samples before ``d``
    and, with ``day`` = (day, middle), the samples within DAY_NEIGHBOURS of
    ``d + middle - day``, where ``middle`` is the horizon's middle step: one window around
    the same time a day before serves every step ahead."""

    def __init__(self, observed: FloatArray, lags: int, day: tuple[int, int] | None) -> None:
        self.observed, self.lags, self.day = observed, lags, day

    @property
    def width(self) -> int:
        return 1 + self.lags + (0 if self.day is None else 2 * DAY_NEIGHBOURS + 1)

    @property
    def first_behind(self) -> int:
        """The first decision whose day window lies wholly within the trace."""
        if self.day is None:
            return 0
        day, middle = self.day
        return day + DAY_NEIGHBOURS - middle

    def rows(self, decisions: np.ndarray) -> FloatArray:
        recent = self.observed[decisions[:, None] - 1 - np.arange(self.lags)[None, :]]
        columns = [np.ones((decisions.size, 1)), recent]
        if self.day is not None:
            day, middle = self.day
            offsets = np.arange(-DAY_NEIGHBOURS, DAY_NEIGHBOURS + 1)
            columns.append(self.observed[decisions[:, None] + middle - day + offsets[None, :]])
        return np.hstack(columns)


def _day(day: int, horizon: int) -> tuple[int, int] | None:
    """(day, middle) when a day window around the horizon's middle ends before the decision,
    else None (a day of few steps, or a horizon near a day)."""
    middle = (horizon - 1) // 2
    return (day, middle) if middle + DAY_NEIGHBOURS <= day - 1 else None


def _rows(targets: FloatArray, first: int) -> int:
    """Rows from decision ``first`` on whose last step ahead has a known target."""
    return int(np.isfinite(targets[first:, -1]).sum())


def _fitted(inputs: _Inputs, decisions: np.ndarray, targets: FloatArray) -> FloatArray:
    """Each step ahead's least-squares forecast at ``decisions``, fitted on them."""
    coefficients = _least_squares(inputs, decisions, targets[decisions])
    if not np.isfinite(coefficients).all():
        raise HindsightUnavailableError("too few known loads to fit a hindsight forecast")
    out = np.empty((decisions.size, coefficients.shape[1]))
    for first in range(0, decisions.size, CHUNK_ROWS):
        chunk = decisions[first : first + CHUNK_ROWS]
        out[first : first + chunk.size] = inputs.rows(chunk) @ coefficients
    return out


def _least_squares(inputs: _Inputs, decisions: np.ndarray, targets: FloatArray) -> FloatArray:
    """Coefficients (inputs x steps ahead), each step ahead over the rows its target is known.

    The QR factor of [inputs | target] is folded chunk by chunk (TSQR), so memory stays that
    of one chunk; its corner holds the least-squares solution.
    """
    width, steps = inputs.width, targets.shape[1]
    folded = [np.zeros((0, width + 1)) for _ in range(steps)]
    for first in range(0, decisions.size, CHUNK_ROWS):
        rows = slice(first, first + CHUNK_ROWS)
        design = inputs.rows(decisions[rows])
        for ahead in range(steps):
            target = targets[rows, ahead]
            known = np.isfinite(target)
            if not known.any():
                continue
            stacked = np.vstack([folded[ahead], np.column_stack([design[known], target[known]])])
            folded[ahead] = scipy.linalg.qr(stacked, mode="r", check_finite=False)[0][: width + 1]
    coefficients = np.full((width, steps), np.nan)
    for ahead, factor in enumerate(folded):
        if factor.shape[0] >= width:
            # lstsq on the triangle: a constant load makes its lag columns equal.
            solved, *_ = np.linalg.lstsq(factor[:width, :width], factor[:width, width], rcond=None)
            coefficients[:, ahead] = solved
    return coefficients


def _targets(load: FloatArray, horizon: int) -> FloatArray:
    """Row ``d``: the load the decision at ``d`` forecasts each step ahead of; NaN if unseen."""
    steps = np.arange(load.size)[:, None] + np.arange(horizon)[None, :]
    targets = np.full(steps.shape, np.nan)
    inside = steps < load.size
    targets[inside] = load[steps[inside]]
    targets[~np.isfinite(targets)] = np.nan
    return targets


def _carried_forward(load: FloatArray) -> tuple[FloatArray, int]:
    """``load`` with each missing sample read as the newest one before it, and the index of
    the first sample (before it nothing was seen, and no decision there is fitted).

    Interpolating would read the sample after the gap, which a decision inside the gap has
    not seen.
    """
    values = np.asarray(load, dtype=np.float64)
    seen = np.isfinite(values)
    if not seen.any():
        raise HindsightUnavailableError(
            "the trace has no finite sample to fit a hindsight forecast"
        )
    first_seen = int(np.flatnonzero(seen)[0])
    filled = carried_forward(np.where(seen, values, np.nan))
    filled[:first_seen] = values[first_seen]
    return np.clip(filled, 0.0, None), first_seen
