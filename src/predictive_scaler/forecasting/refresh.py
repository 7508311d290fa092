"""A forecaster that keeps its model selection between calls and redoes it on a schedule."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from predictive_scaler.forecasting.auto import Auto, ModelSelection, select_model
from predictive_scaler.forecasting.base import ForecastModel
from predictive_scaler.forecasting.calibration import MIN_ERRORS, LiveErrors, conformal_offsets
from predictive_scaler.forecasting.forecast import FloatArray, Forecast
from predictive_scaler.forecasting.hygiene import clean_series
from predictive_scaler.forecasting.registry import make_model
from predictive_scaler.forecasting.seasons import (
    SeasonalProfile,
    SeasonKnowledge,
    TimedSeries,
    season_knowledge,
)

DEFAULT_REFRESH_SECONDS = 3600.0
# Marks a model that forecasts the recent window minus the long history's seasonal profile.
SEASON_SUFFIX = "+season"


class ScheduledSelection:
    """Forecast one workload's load, re-selecting and refitting every ``refresh_seconds``.

    A backtest selection (``auto``) costs about a second of CPU per workload
    (both pathways on 6 h at 1 min) and a fit tens of milliseconds, while
    updating a fitted model with new values costs a few milliseconds. So
    the fitted model is a cache: kept and updated until it is
    ``refresh_seconds`` old (or was selected for a shorter horizon), then
    selected and fitted afresh. Losing it (an operator
    restart) only costs one refresh.
    """

    def __init__(
        self,
        model: str = "auto",
        *,
        refresh_seconds: float = DEFAULT_REFRESH_SECONDS,
        season_length: int | None = None,
        candidates: Sequence[str] | None = None,
        seasonality_seconds: float | None = None,
    ) -> None:
        if refresh_seconds <= 0:
            raise ValueError(f"refresh_seconds must be > 0, got {refresh_seconds}")
        make_model(model, season_length=season_length)  # fail fast on a bad name
        self.model = model
        self.refresh_seconds = refresh_seconds
        self.season_length = season_length
        self.candidates = None if candidates is None else tuple(candidates)
        self.selection: ModelSelection | None = None
        self.fitted: ForecastModel | None = None
        self.fitted_at: float | None = None
        self.chosen: str | None = None
        # A season the user configured: used, not searched for, in the long history.
        self.seasonality_seconds = seasonality_seconds
        self.seasons: SeasonKnowledge | None = None
        # The long history's seasonal profile when it won the backtest; the
        # fitted model then sees the recent window minus it (plus ``shift``).
        self.profile: SeasonalProfile | None = None
        self.shift = 0.0
        # Naive's in-sample error on the recent window itself, so that scores
        # of a selection on the window minus the profile read on the same scale.
        self.plain_scale = 1.0
        self.live_errors = LiveErrors()
        # The last forecast_series call: what it was asked, and what it answered.
        self._last_call: tuple[tuple[object, ...], Forecast] | None = None

    @property
    def backtest_errors(self) -> dict[str, float]:
        """Each candidate's backtest MASE in the last selection, scaled to the recent window."""
        if self.selection is None:
            return {}
        if self.profile is None:
            return dict(self.selection.scores)
        factor = self.selection.scale / self.plain_scale
        return {name + SEASON_SUFFIX: s * factor for name, s in self.selection.scores.items()}

    def _needs_refresh(self, horizon: int, now: float) -> bool:
        return (
            self.fitted is None
            or self.fitted_at is None
            or now - self.fitted_at >= self.refresh_seconds
            or (self.selection is not None and self.selection.horizon < horizon)
        )

    def forecast_series(
        self,
        recent: TimedSeries,
        horizon: int,
        level: float,
        now: float,
        *,
        long: TimedSeries | None = None,
    ) -> Forecast:
        """Forecast after ``recent``, with the seasons of ``long`` and live-calibrated bounds.

        On refresh, seasons are found in ``long`` (or ``seasonality_seconds``
        is used) and their profile, read along the recent window's clock,
        competes against the plain selection: the models fit the window
        minus the profile, and the profile is added back to their forecast.
        Whichever backtests better is kept until the next refresh. The band
        comes from the errors of the forecasts this object really made, once
        there are enough of them (:class:`LiveErrors`), else from the backtest.
        """
        series = clean_series(recent.values)
        last = round(recent.end_time / recent.step_seconds)
        # Evaluated more often than samples arrive (every 30 s on a 1-minute
        # clock), half the calls see the window of the call before: the
        # model, the live errors and so the answer would all be the same.
        asked = (last, recent.step_seconds, horizon, level, series.tobytes())
        if (
            self._last_call is not None
            and self._last_call[0] == asked
            and not self._needs_refresh(horizon, now)
        ):
            return self._last_call[1]
        self.live_errors.observe(series, last)
        offsets = np.arange(-series.size + 1, horizon + 1, dtype=np.float64)
        step_times = np.asarray(recent.end_time + recent.step_seconds * offsets, dtype=np.float64)
        if self._needs_refresh(horizon, now):
            self._refresh_with_seasons(series, step_times, horizon, now, long)
        else:
            assert self.fitted is not None  # checked by _needs_refresh
            self.fitted.update(self._adjusted(series, step_times))
        assert self.fitted is not None
        self.chosen = self.fitted.chosen_ if isinstance(self.fitted, Auto) else self.model
        if self.profile is not None:
            self.chosen += SEASON_SUFFIX
        inner = self.fitted.predict(horizon, level)
        back = self._seasonal_part(step_times[series.size :])
        mean = np.clip(inner.mean + back, 0.0, None)
        lower, upper = inner.lower + back, inner.upper + back
        if len(self.live_errors) >= MIN_ERRORS:
            low, high = conformal_offsets(self.live_errors.table(horizon), horizon, level)
            lower, upper = mean + low, mean + high
        self.live_errors.record(mean, last)
        name = inner.model + (SEASON_SUFFIX if self.profile is not None else "")
        forecast = Forecast(
            name,
            mean,
            np.clip(np.minimum(lower, mean), 0.0, None),
            np.clip(np.maximum(upper, mean), 0.0, None),
            level,
            inner.notes,
        )
        self._last_call = (asked, forecast)
        return forecast

    def _seasonal_part(self, times: FloatArray) -> FloatArray | float:
        return 0.0 if self.profile is None else self.profile.along(times) - self.shift

    def _adjusted(self, series: FloatArray, step_times: FloatArray) -> FloatArray:
        if self.profile is None:
            return series
        adjusted = series - self.profile.along(step_times[: series.size]) + self.shift
        return np.asarray(np.clip(adjusted, 0.0, None), dtype=np.float64)

    def _select(self, series: FloatArray, horizon: int) -> ModelSelection | None:
        """The backtest selection on ``series`` (``auto`` only; None for a fixed model)."""
        if self.model != "auto":
            return None
        return select_model(
            series, candidates=self.candidates, horizon=horizon, season_length=self.season_length
        )

    def _fit(self, series: FloatArray, selection: ModelSelection | None) -> ForecastModel:
        if selection is None:
            return make_model(self.model, season_length=self.season_length).fit(series)
        return Auto(selection=selection, season_length=self.season_length).fit(series)

    def _refresh_with_seasons(
        self,
        series: FloatArray,
        step_times: FloatArray,
        horizon: int,
        now: float,
        long: TimedSeries | None,
    ) -> None:
        """Select on the window and on the window minus the seasons' profile; fit the better.

        Both selections run before anything is fitted, so only the pathway
        that won pays for its final fit (a fit costs as much as a few
        candidates' backtests).
        """
        self.profile, self.shift = None, 0.0
        self.fitted_at = now
        knowledge, profile = (
            season_knowledge(long, self.seasonality_seconds) if long is not None else (None, None)
        )
        self.seasons = knowledge
        plain = self._select(series, horizon)
        self.plain_scale = plain.scale if plain is not None else 1.0
        if profile is not None and knowledge is not None:
            base = profile.along(step_times[: series.size])
            shift = max(0.0, float((base - series).max()))
            adjusted = series - base + shift
            seasonal = self._select(adjusted, horizon)
            # A fixed model (not auto) has no backtest to compare: a season found is used.
            if seasonal is None or plain is None or seasonal.best_error <= plain.best_error:
                self.fitted, self.selection = self._fit(adjusted, seasonal), seasonal
                self.profile, self.shift = profile, shift
                self.seasons = dataclasses.replace(knowledge, in_use=True)
                return
        self.fitted, self.selection = self._fit(series, plain), plain
