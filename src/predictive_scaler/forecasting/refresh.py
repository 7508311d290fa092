"""A forecaster that keeps its model selection between calls and redoes it on a schedule.

The selection itself (:func:`~.refresh_job.refresh_model`) is a pure
function of a picklable :class:`~.refresh_job.RefreshRequest`, so the
operator can run it in another process while the fitted model it replaces
goes on forecasting. What stays here is what one workload keeps between
calls: when to select again (schedule, breaks, failures), the pathways in
use and their updates, and the band from the forecasts really made.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from predictive_scaler.forecasting.auto import ModelSelection
from predictive_scaler.forecasting.base import ForecastModel
from predictive_scaler.forecasting.breaks import BreakWatch, run_length
from predictive_scaler.forecasting.calibration import MIN_ERRORS, LiveErrors, conformal_offsets
from predictive_scaler.forecasting.forecast import FloatArray, Forecast
from predictive_scaler.forecasting.handover import SelectionHandover, Submit, run_here
from predictive_scaler.forecasting.hygiene import clean_series
from predictive_scaler.forecasting.known_seasons import SeasonKnowledge
from predictive_scaler.forecasting.numerics import model_numerics
from predictive_scaler.forecasting.pathways import (
    SEASON_SUFFIX,
    Pathway,
    combined_band,
    combined_errors,
    combined_name,
    combined_score,
)
from predictive_scaler.forecasting.refresh_job import (
    DEFAULT_SELECTION_BUDGET_SECONDS,
    Refreshed,
    RefreshRequest,
)
from predictive_scaler.forecasting.registry import make_model
from predictive_scaler.forecasting.seasons import SeasonalProfile, TimedSeries
from predictive_scaler.units import format_duration

DEFAULT_REFRESH_SECONDS = 3600.0

__all__ = [
    "SEASON_SUFFIX",
    "ModelPendingError",
    "Pathway",
    "ScheduledSelection",
]


class ModelPendingError(ValueError):
    """No fitted model yet: the first selection is still running elsewhere."""


class ScheduledSelection:
    """Forecast one workload's load, re-selecting and refitting every ``refresh_seconds``.

    A backtest selection (``auto``) costs about a second of CPU per workload
    (both pathways on 6 h at 1 min) and a fit tens of milliseconds, while
    updating a fitted model with new values costs a few milliseconds. So
    the fitted model is a cache: kept and updated until it is
    ``refresh_seconds`` old (or was selected for a shorter horizon), then
    selected and fitted afresh. Losing it (an operator
    restart) only costs one refresh.

    With ``submit``, a due selection is handed to it as a
    :class:`RefreshRequest` instead of being run in the call, and its outcome
    comes back through ``handover`` (:class:`SelectionHandover`, from any
    thread): meanwhile the model it will replace goes on forecasting, and
    before the first one arrives a forecast raises :class:`ModelPendingError`.
    """

    def __init__(
        self,
        model: str = "auto",
        *,
        refresh_seconds: float = DEFAULT_REFRESH_SECONDS,
        season_length: int | None = None,
        candidates: Sequence[str] | None = None,
        seasonality_seconds: float | None = None,
        budget_seconds: float | None = DEFAULT_SELECTION_BUDGET_SECONDS,
        submit: Submit | None = None,
    ) -> None:
        if refresh_seconds <= 0:
            raise ValueError(f"refresh_seconds must be > 0, got {refresh_seconds}")
        make_model(model, season_length=season_length)  # fail fast on a bad name
        self.model = model
        self.refresh_seconds = refresh_seconds
        self.season_length = season_length
        self.candidates = None if candidates is None else tuple(candidates)
        # The fitted pathways: the forecast is their mean (see pathways.py).
        self.pathways: tuple[Pathway, ...] = ()
        self.fitted_at: float | None = None
        # The selection in use was made with no long history (its first read failed, or
        # the caller had none yet): one arriving is a reason to select again.
        self.selected_without_long = False
        self.chosen: str | None = None
        # A season the user configured: used, not searched for, in the long history.
        self.seasonality_seconds = seasonality_seconds
        self.seasons: SeasonKnowledge | None = None
        # Naive's in-sample error on the recent window itself, so that scores
        # of a selection on the window minus the profile read on the same scale.
        self.plain_scale = 1.0
        self.live_errors = LiveErrors()
        # The load left the one-step band and stayed out (see breaks.py): the
        # selection is made again at once.
        self.breaks = BreakWatch()
        self.broken = False
        # Why the selection was asked for ahead of its schedule, until take_break().
        self._break: str | None = None
        self.budget_seconds = budget_seconds
        # Without ``submit`` a due selection runs in the call and lands at once.
        self.handover = SelectionHandover(submit or run_here, refresh_seconds)
        # The outcome installed by the last call, until take_installed() is called.
        self._installed: Refreshed | None = None
        # What the installed selection left unscored for lack of budget.
        self.unscored: tuple[str, ...] = ()
        # The recent window's cycle the installed selection used as its season.
        self.cycle_seconds: float | None = None
        # The last forecast_series call: what it was asked, and what it answered.
        self._last_call: tuple[tuple[object, ...], Forecast] | None = None

    @property
    def fitted(self) -> ForecastModel | None:
        """The first pathway's model (the plain one when it takes part); None before any."""
        return self.pathways[0].fitted if self.pathways else None

    @property
    def selection(self) -> ModelSelection | None:
        """The first pathway's backtest selection; None before any, or for a fixed model."""
        return self.pathways[0].selection if self.pathways else None

    @property
    def profile(self) -> SeasonalProfile | None:
        """The long history's seasonal profile when a pathway forecasts with it."""
        return next((way.profile for way in self.pathways if way.profile is not None), None)

    @property
    def backtest_errors(self) -> dict[str, float]:
        """Each candidate's backtest MASE in the last selection, scaled to the recent window.

        A seasonal pathway's candidates are marked with SEASON_SUFFIX; with
        two pathways, their mean's own score is there under its name.
        """
        scores: dict[str, float] = {}
        for way in self.pathways:
            if way.selection is not None:
                factor = way.selection.scale / self.plain_scale
                scores |= {
                    name + way.suffix: score * factor
                    for name, score in way.selection.scores.items()
                }
        errors = combined_errors(self.pathways) if len(self.pathways) > 1 else None
        if errors is not None:
            scores[combined_name(self.pathways, self.model)] = combined_score(
                errors, self.plain_scale
            )
        return scores

    def take_installed(self) -> Refreshed | None:
        """The selection installed since the last call of this, if any."""
        installed, self._installed = self._installed, None
        return installed

    def take_break(self) -> str | None:
        """Why a selection was asked for ahead of schedule since the last call, if one was."""
        broke, self._break = self._break, None
        return broke

    def _take_delivery(self, now: float) -> RefreshRequest | None:
        """Install the selection that came back, if one did; the request it answered."""
        landed = self.handover.receive(now)
        if landed is None:
            return None
        refreshed = landed.refreshed
        self.broken = False
        self.breaks.reset()
        self.pathways = refreshed.pathways
        self.plain_scale, self.seasons = refreshed.plain_scale, refreshed.seasons
        self.fitted_at, self.unscored = refreshed.selected_at, refreshed.unscored
        self.cycle_seconds = refreshed.cycle_seconds
        self._installed, self._last_call = refreshed, None
        self.selected_without_long = landed.request.long is None
        return landed.request

    def _needs_refresh(self, horizon: int, now: float, *, long_given: bool) -> bool:
        if self.handover.retry_pending(now):
            return False
        return (
            not self.pathways
            or self.fitted_at is None
            or now - self.fitted_at >= self.refresh_seconds
            or self.broken
            or (self.selection is not None and self.selection.horizon < horizon)
            # Seasons, unseen by the selection in use, would wait a whole refresh otherwise.
            or (self.selected_without_long and long_given)
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
        makes a second pathway beside the plain selection: its models fit
        the window minus the profile, and the profile is added back to their
        forecast. The forecast is the two pathways' mean (one alone when the
        other backtests far worse; see :mod:`.pathways`) until the next
        refresh, each updated with the new samples in between. The band
        comes from the errors of the forecasts this object really made, once
        there are enough of them (:class:`LiveErrors`), else from the backtest.
        """
        series = clean_series(recent.values)
        last = round(recent.end_time / recent.step_seconds)
        # Evaluated more often than samples arrive (every 30 s on a 1-minute
        # clock), half the calls see the window of the call before: the
        # model, the live errors and so the answer would all be the same.
        asked = (last, recent.step_seconds, horizon, level, series.tobytes())
        self._take_delivery(now)
        if (
            self._last_call is not None
            and self._last_call[0] == asked
            and not self._needs_refresh(horizon, now, long_given=long is not None)
        ):
            return self._last_call[1]
        self.live_errors.observe(series, last)
        self.breaks.observe(series, last)
        side = self.breaks.broken(level) if self.pathways and not self.broken else None
        if side is not None:
            self.broken = True
            self._break = (
                f"the load lay {side} the forecast's {level:.0%} band "
                f"{run_length(level)} samples in a row: the model is selected again now, "
                f"ahead of its {format_duration(self.refresh_seconds)} refresh"
            )
        offsets = np.arange(-series.size + 1, horizon + 1, dtype=np.float64)
        step_times = np.asarray(recent.end_time + recent.step_seconds * offsets, dtype=np.float64)
        # The thread limit set once for the pathways' updates and their band,
        # not once by each of them: 5-7 % of an update on Alibaba's and NASA's
        # windows (4.0 -> 3.8 ms, 2.3 -> 2.2 ms, same forecasts).
        with model_numerics():
            if self._needs_refresh(horizon, now, long_given=long is not None):
                self._refresh(series, step_times, horizon, now, long)
            else:
                self._update(series, step_times)
            if not self.pathways:
                failure = self.handover.failure
                why = f" ({failure})" if failure else ""
                raise ModelPendingError(f"selecting a model for the first time{why}")
            inner = combined_band(self.pathways, step_times[series.size :], level)
        self.chosen = inner.model  # named after the models in use, as combined_name does
        mean = np.clip(inner.mean, 0.0, None)
        lower, upper = inner.lower, inner.upper
        if len(self.live_errors) >= MIN_ERRORS:
            low, high = conformal_offsets(self.live_errors.table(horizon), horizon, level)
            lower, upper = mean + low, mean + high
        self.live_errors.record(mean, last)
        forecast_lower = np.clip(np.minimum(lower, mean), 0.0, None)
        forecast_upper = np.clip(np.maximum(upper, mean), 0.0, None)
        self.breaks.expect(last, float(forecast_lower[0]), float(forecast_upper[0]))
        forecast = Forecast(inner.model, mean, forecast_lower, forecast_upper, level, inner.notes)
        self._last_call = (asked, forecast)
        return forecast

    def _update(self, series: FloatArray, step_times: FloatArray) -> None:
        for way in self.pathways:
            way.fitted.update(way.adjusted(series, step_times))

    def _refresh(
        self,
        series: FloatArray,
        step_times: FloatArray,
        horizon: int,
        now: float,
        long: TimedSeries | None,
    ) -> None:
        """Hand the refresh over, and go on with the model there is until it lands."""
        request = RefreshRequest(
            model=self.model,
            candidates=self.candidates,
            season_length=self.season_length,
            seasonality_seconds=self.seasonality_seconds,
            series=series,
            step_times=step_times,
            horizon=horizon,
            now=now,
            long=long,
            budget_seconds=self.budget_seconds,
            seasons_held=self.seasons.seasons if self.seasons is not None else (),
        )
        may_wait = self.refresh_seconds if self.pathways and not self.broken else 0.0
        self.handover.hand_over(request, may_wait, urgent=self.broken)
        # Only this request's selection was fitted on this window; one handed over
        # earlier that lands now was fitted on an older one and is updated to it.
        if self._take_delivery(now) is not request:
            self._update(series, step_times)
