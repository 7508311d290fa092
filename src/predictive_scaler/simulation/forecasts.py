"""Causal forecasts for every step of a trace, computed once and replayed many times.

A forecast at step ``t`` depends only on the load before ``t`` and on the
model, never on the replicas a policy chose, so the headroom sweep of a
backtest reuses one table instead of refitting models for every setting.
The table is filled by :class:`ScheduledSelection`, the forecaster the
operator runs, on the same history window.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from predictive_scaler.forecasting import Forecast, ScheduledSelection
from predictive_scaler.forecasting.calibration import (
    LIVE_ERRORS_KEPT,
    MIN_ERRORS,
    conformal_quantiles,
)
from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.forecasting.seasons import TimedSeries
from predictive_scaler.scaling import LoadHistory

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class ForecastTable:
    """Row ``t - start`` holds the forecast made at step ``t`` for steps ``t..t+horizon-1``.

    A row of NaN means no forecast was possible at that step.
    """

    start: int
    step_seconds: float
    level: float
    mean: FloatArray
    lower: FloatArray
    upper: FloatArray
    models: tuple[str, ...]

    @property
    def horizon(self) -> int:
        return int(self.mean.shape[1])

    def at(self, t: int, horizon: int, level: float) -> Forecast:
        """The forecast made at step ``t``; ValueError when the table cannot answer."""
        if horizon > self.horizon or level != self.level:
            raise ValueError(
                f"the table holds {self.horizon} steps at level {self.level}, "
                f"not {horizon} at {level}"
            )
        row = t - self.start
        if not 0 <= row < self.mean.shape[0] or not np.isfinite(self.mean[row, 0]):
            raise ValueError(f"no forecast was made at step {t}")
        return Forecast(
            self.models[row],
            self.mean[row, :horizon],
            self.lower[row, :horizon],
            self.upper[row, :horizon],
            level,
        )

    def forecaster(self, history: LoadHistory, horizon: int, level: float) -> Forecast:
        """A :data:`~predictive_scaler.scaling.Forecaster` that reads the table."""
        t = round(history.end_time / self.step_seconds) + 1
        return self.at(t, horizon, level)


def history_before(
    load: FloatArray, t: int, history_steps: int, step_seconds: float
) -> LoadHistory:
    """What a decision at step ``t`` sees: the last ``history_steps`` samples before ``t``.

    The forecast table and the predictive policy both use it, so the table
    holds exactly the forecasts the policy would have made.
    """
    return LoadHistory(load[max(0, t - history_steps) : t], step_seconds, (t - 1) * step_seconds)


@dataclass(frozen=True)
class LongWindow:
    """The operator's long history in trace steps: ``steps`` back, averaged ``factor`` at a time."""

    steps: int
    factor: int

    @classmethod
    def of(cls, seconds: float, long_step_seconds: float, step_seconds: float) -> LongWindow:
        factor = max(1, round(long_step_seconds / step_seconds))
        return cls(max(factor, round(seconds / step_seconds) // factor * factor), factor)

    def before(self, load: FloatArray, t: int, step_seconds: float) -> TimedSeries:
        """What the operator's long history holds at step ``t``, missing before the trace began.

        Each coarse sample is the mean of ``factor`` steps, as a rate over the
        long step is in Prometheus, placed at the middle of its steps as the
        operator places it (see ``operator.histories.read_histories``).
        """
        window = np.full(self.steps, np.nan)
        seen = load[max(0, t - self.steps) : t]
        window[window.size - seen.size :] = seen
        blocks = window.reshape(-1, self.factor)
        counts = np.isfinite(blocks).sum(axis=1)
        sums = np.nansum(blocks, axis=1)
        coarse = np.divide(sums, counts, out=np.full(counts.size, np.nan), where=counts > 0)
        end = (t - 1) * step_seconds - (self.factor - 1) / 2 * step_seconds
        return TimedSeries(np.asarray(coarse, dtype=np.float64), self.factor * step_seconds, end)


def forecast_trace(
    load: FloatArray,
    *,
    start: int,
    history_steps: int,
    horizon: int,
    level: float,
    step_seconds: float,
    forecaster: ScheduledSelection,
    long: LongWindow | None = None,
    progress: Progress | None = None,
) -> ForecastTable:
    """Forecast ``horizon`` steps at every step from ``start``, from the last ``history_steps``.

    With ``long``, the forecaster also sees the long history the operator
    would have read, and finds and uses its seasons as the operator does.
    """
    steps = load.size - start
    mean = np.full((steps, horizon), np.nan)
    lower, upper = mean.copy(), mean.copy()
    models: list[str] = []
    for row, t in enumerate(range(start, load.size)):
        history = history_before(load, t, history_steps, step_seconds)
        model = "none"
        if history.problem(t * step_seconds) is None:
            recent = TimedSeries(history.values, step_seconds, history.end_time)
            forecast = forecaster.forecast_series(
                recent,
                horizon,
                level,
                t * step_seconds,
                long=None if long is None else long.before(load, t, step_seconds),
            )
            mean[row], lower[row], upper[row] = forecast.mean, forecast.lower, forecast.upper
            model = forecaster.chosen or forecast.model
        models.append(model)
        if progress is not None:
            progress(row + 1, steps)
    return ForecastTable(start, step_seconds, level, mean, lower, upper, tuple(models))


# The clairvoyant reference knows the load's mean over this many steps centred
# on each step it forecasts: the load's course, without the step-to-step noise.
CLAIRVOYANT_STEPS = 5
CLAIRVOYANT = "clairvoyant"


def centred_mean(load: FloatArray, steps: int) -> FloatArray:
    """The mean of the observed samples within ``steps // 2`` of each step (NaN if none)."""
    half = steps // 2
    seen = np.isfinite(load)
    kernel = np.ones(2 * half + 1)
    sums = np.convolve(np.where(seen, load, 0.0), kernel, mode="same")
    counts = np.convolve(seen.astype(np.float64), kernel, mode="same")
    means = np.full(load.size, np.nan)
    np.divide(sums, counts, out=means, where=counts > 0)
    return means


def clairvoyant_table(
    load: FloatArray,
    *,
    start: int,
    horizon: int,
    level: float,
    step_seconds: float,
    steps: int = CLAIRVOYANT_STEPS,
    kept: int = LIVE_ERRORS_KEPT,
) -> ForecastTable:
    """What a forecaster that knew the load's future course, but not its noise, would say.

    Its mean at each step ahead is the load's centred mean over ``steps``
    (:func:`centred_mean`), read from the future: no model can do that. Its
    band is calibrated as the operator's is, from the errors it made on the
    last ``kept`` steps already observed (the noise around that mean). No
    one can run it; replayed through the same policy it bounds what a better
    forecast could still buy the scaler on a trace, because what is left
    for it to miss is the noise no forecast sees.
    """
    smooth = centred_mean(load, steps)
    noise = load - smooth
    rows = load.size - start
    mean = np.full((rows, horizon), np.nan)
    lower, upper = mean.copy(), mean.copy()
    for row, t in enumerate(range(start, load.size)):
        past = noise[max(0, t - kept) : t]
        past = past[np.isfinite(past)]
        ahead = smooth[np.minimum(np.arange(t, t + horizon), load.size - 1)]
        if past.size < MIN_ERRORS or not np.isfinite(ahead).all():
            continue
        low, high = conformal_quantiles(past, level)
        mean[row] = ahead
        lower[row] = np.clip(ahead + min(low, 0.0), 0.0, None)
        upper[row] = ahead + max(high, 0.0)
    return ForecastTable(start, step_seconds, level, mean, lower, upper, (CLAIRVOYANT,) * rows)
