"""The hindsight reference: the least-squares forecast of the load from its own recent past.

The clairvoyant reference (:func:`.forecasts.clairvoyant_table`) reads the
load's course from the future, so it shows what the policy would buy with
knowledge no forecaster has. This one asks a nearer question: what would a
forecaster of the load's own past buy that had learnt, with hindsight, how
this trace follows its past? Each step ahead is forecast by least squares on
the samples the decision sees (the last hour of them, and the steps around
the same time a day earlier where the trace holds enough rows with a day
behind to fit them), with one set of coefficients for the rows with a day
behind and one for the others, fitted on the whole trace. So on the trace no
linear rule of those inputs with fixed coefficients has a smaller mean
squared error. It is a reference, not a bound: the policy's cost also
depends on the band and the budget's threshold, and a model refitted as it
goes, as the operator's are, can do better by adapting, or by reading more
than an hour. Its band comes from the errors of its last forecasts whose
steps were all observed, by the operator's own conformal rule
(:func:`..forecasting.calibration.conformal_offsets`).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from predictive_scaler.forecasting.calibration import LIVE_ERRORS_KEPT, conformal_offsets
from predictive_scaler.forecasting.forecast import FloatArray
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
# Rows a block needs per coefficient it fits: with as many rows as coefficients least
# squares passes through every target, noise included, and forecasts nothing.
ROWS_PER_COEFFICIENT = 10
# Rows of inputs built at a time, so that a month of 15-second samples does not hold a
# design matrix of gigabytes.
CHUNK_ROWS = 8192


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
    from the first step with a window of samples behind it, so the band of the first
    scored rows is calibrated already, as the clairvoyant's is. ValueError when the
    trace is too short for a fit.
    """
    if not 1 <= start < load.size:
        raise ValueError(f"the trace has {load.size} steps; the table starts at step {start}")
    if horizon < 1:
        raise ValueError(f"the horizon must be at least one step, got {horizon}")
    observed = _carried_forward(load)
    hour = max(1, round(RECENT_SECONDS / step_seconds))
    # The rows from the first full window on must number ROWS_PER_COEFFICIENT per coefficient.
    fits = (load.size - ROWS_PER_COEFFICIENT) // (ROWS_PER_COEFFICIENT + 1)
    lags = min(hour, MAX_LAGS, start, fits)
    if lags < 1:
        raise ValueError(f"{load.size} steps are too few to fit a hindsight forecast")
    day = round(DAY_SECONDS / step_seconds)
    decisions = np.arange(lags, load.size)
    inputs = _Inputs(observed, lags, _day_read(load.size, lags, day, horizon))
    targets = _targets(load, decisions, horizon)
    mean = np.full(targets.shape, np.nan)
    for block in inputs.blocks(decisions):
        coefficients = _least_squares(inputs, decisions[block], targets[block])
        mean[block] = inputs.times(decisions[block], coefficients)
    mean = np.clip(mean, 0.0, None)
    errors = targets - mean
    scored = mean[start - lags :].copy()
    lower, upper = np.full(scored.shape, np.nan), np.full(scored.shape, np.nan)
    for row in range(scored.shape[0]):
        # Forecasts made up to ``horizon`` steps back have every step observed.
        newest = start + row - horizon - lags
        window = errors[max(0, newest - kept + 1) : max(0, newest + 1)]
        try:
            low, high = conformal_offsets(window, horizon, level)
        except ValueError:
            continue  # too few errors yet
        lower[row] = np.clip(scored[row] + low, 0.0, None)
        upper[row] = scored[row] + high
    scored[~np.isfinite(upper).all(axis=1)] = np.nan
    return ForecastTable(
        start, step_seconds, level, scored, lower, upper, (HINDSIGHT,) * len(scored)
    )


class _Inputs:
    """What a decision at step ``d`` reads: a constant, the ``lags`` samples before ``d``
    and, with ``day``, the samples within DAY_NEIGHBOURS of ``d + middle - day``, where
    ``middle`` is the horizon's middle step: one window around the same time a day before
    serves every step ahead."""

    def __init__(self, observed: FloatArray, lags: int, day: tuple[int, int] | None) -> None:
        self.observed, self.lags, self.day = observed, lags, day

    @property
    def width(self) -> int:
        return 1 + self.lags + (0 if self.day is None else 2 * DAY_NEIGHBOURS + 1)

    def blocks(self, decisions: np.ndarray) -> list[np.ndarray]:
        """The rows fitted together: with a day behind, and without."""
        if self.day is None:
            return [np.ones(decisions.size, dtype=bool)]
        day, middle = self.day
        behind = decisions + middle - day - DAY_NEIGHBOURS >= 0
        return [behind, ~behind]

    def rows(self, decisions: np.ndarray) -> FloatArray:
        recent = self.observed[decisions[:, None] - 1 - np.arange(self.lags)[None, :]]
        columns = [np.ones((decisions.size, 1)), recent]
        if self.day is not None:
            day, middle = self.day
            offsets = np.arange(-DAY_NEIGHBOURS, DAY_NEIGHBOURS + 1)
            around = decisions[:, None] + middle - day + offsets[None, :]
            # Rows without a day behind read zeros there, fitted apart from the others.
            columns.append(np.where(around >= 0, self.observed[np.maximum(around, 0)], 0.0))
        return np.hstack(columns)

    def times(self, decisions: np.ndarray, coefficients: FloatArray) -> FloatArray:
        out = np.empty((decisions.size, coefficients.shape[1]))
        for first in range(0, decisions.size, CHUNK_ROWS):
            chunk = decisions[first : first + CHUNK_ROWS]
            out[first : first + chunk.size] = self.rows(chunk) @ coefficients
        return out


def _day_read(size: int, lags: int, day: int, horizon: int) -> tuple[int, int] | None:
    """(day, middle) when the day before is read, else None: read when its window lies
    before every decision and enough rows have a day behind to fit its coefficients."""
    middle = (horizon - 1) // 2
    if middle + DAY_NEIGHBOURS > day - 1:
        return None
    behind = size - (day + DAY_NEIGHBOURS - middle)
    if behind < ROWS_PER_COEFFICIENT * (1 + lags + 2 * DAY_NEIGHBOURS + 1):
        return None
    return day, middle


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


def _targets(load: FloatArray, decisions: np.ndarray, horizon: int) -> FloatArray:
    """The load each decision's forecast of each step ahead is scored on; NaN if unseen."""
    steps = decisions[:, None] + np.arange(horizon)[None, :]
    targets = np.full(steps.shape, np.nan)
    inside = steps < load.size
    targets[inside] = load[steps[inside]]
    return targets


def _carried_forward(load: FloatArray) -> FloatArray:
    """``load`` with each missing sample read as the newest one before it.

    Interpolating would read the sample after the gap, which a decision inside the gap has
    not seen. Before the first sample the first one stands: a decision there holds for
    lack of samples and asks for no forecast.
    """
    values = np.asarray(load, dtype=np.float64)
    seen = np.isfinite(values)
    if not seen.any():
        raise ValueError("the trace has no finite sample to fit a hindsight forecast on")
    newest = np.maximum.accumulate(np.where(seen, np.arange(values.size), -1))
    newest[newest < 0] = int(np.flatnonzero(seen)[0])
    return np.clip(values[newest], 0.0, None)
