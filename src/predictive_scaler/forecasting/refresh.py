"""A forecaster that keeps its model selection between calls and redoes it on a schedule.

The selection itself (:func:`refresh_model`) is a pure function of a
picklable :class:`RefreshRequest`, so the operator can run it in another
process while the fitted model it replaces goes on forecasting.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from predictive_scaler.forecasting.auto import Auto, ModelSelection, select_model
from predictive_scaler.forecasting.backtest import first_origin
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
# CPU seconds one selection may spend scoring candidates (both pathways) before
# it keeps the best scored so far: about three times the dearest measured
# (3.6 s, auto with seasons on 10,800 points).
DEFAULT_SELECTION_BUDGET_SECONDS = 10.0
# Marks a model that forecasts the recent window minus the long history's seasonal profile.
SEASON_SUFFIX = "+season"


Delivery = Callable[["Refreshed | Exception"], None]
# Hands a selection to another worker, with where its outcome is to be delivered.
Submit = Callable[["RefreshRequest", Delivery], None]


class ModelPendingError(ValueError):
    """No fitted model yet: the first selection is still running elsewhere."""


@dataclass(frozen=True)
class RefreshRequest:
    """Everything one selection needs, and nothing that cannot cross a process boundary."""

    model: str
    candidates: tuple[str, ...] | None
    season_length: int | None
    seasonality_seconds: float | None
    series: FloatArray = field(repr=False)
    step_times: FloatArray = field(repr=False)
    horizon: int
    now: float
    long: TimedSeries | None = field(default=None, repr=False)
    budget_seconds: float | None = DEFAULT_SELECTION_BUDGET_SECONDS


@dataclass(frozen=True)
class Refreshed:
    """A selection's outcome: the fitted model and what it was chosen over."""

    fitted: ForecastModel = field(repr=False)
    selection: ModelSelection | None = field(repr=False)
    seasons: SeasonKnowledge | None
    profile: SeasonalProfile | None = field(repr=False)
    shift: float
    plain_scale: float
    selected_at: float
    cpu_seconds: float
    # Candidates of either pathway the budget left unscored; the seasonal
    # pathway as a whole when the budget was spent before it.
    unscored: tuple[str, ...] = ()

    @property
    def over_budget(self) -> bool:
        return bool(self.unscored)


def refresh_model(request: RefreshRequest) -> Refreshed:
    """Select on the window and on the window minus the seasons' profile; fit the better.

    Both selections run before anything is fitted, so only the pathway
    that won pays for its final fit (a fit costs as much as a few
    candidates' backtests). Once ``budget_seconds`` of CPU are spent, no
    further candidate is scored; the best scored so far is fitted.
    """
    began = time.process_time()
    deadline = None if request.budget_seconds is None else began + request.budget_seconds
    knowledge, profile = (
        season_knowledge(
            request.long,
            request.seasonality_seconds,
            backtest_cut(request, request.long.step_seconds),
        )
        if request.long is not None
        else (None, None)
    )
    series = request.series
    plain = _select(request, series, deadline)
    unscored = list(plain.unscored if plain is not None else ())
    outcome = _Pathway(plain, series, None, 0.0)
    if profile is not None and knowledge is not None:
        if deadline is not None and time.process_time() > deadline:
            unscored.append(f"the seasonal profile of {knowledge.summary()}")
        else:
            adjusted, shift = _deseasonalised(profile, request, series)
            seasonal = _select(request, adjusted, deadline)
            unscored.extend(seasonal.unscored if seasonal is not None else ())
            # A fixed model (not auto) has no backtest to compare: a season found is used.
            if seasonal is None or plain is None or seasonal.best_error <= plain.best_error:
                outcome = _Pathway(seasonal, adjusted, profile, shift)
                knowledge = dataclasses.replace(knowledge, in_use=True)
    return Refreshed(
        fitted=_fit(request, outcome.series, outcome.selection),
        selection=outcome.selection,
        seasons=knowledge,
        profile=outcome.profile,
        shift=outcome.shift,
        plain_scale=plain.scale if plain is not None else 1.0,
        selected_at=request.now,
        cpu_seconds=time.process_time() - began,
        unscored=tuple(unscored),
    )


def backtest_cut(request: RefreshRequest, long_step_seconds: float) -> float:
    """Until when long samples may shape the seasons' profile: none the backtest forecasts.

    The backtest must not see a profile that already knows the loads it
    forecasts: the full long history holds the recent window itself, and a
    weekly phase has only two samples in two weeks, so the last hours are
    half of it. The same profile serves the forecast: the models then fit a
    recent window that the profile has not already flattened. Measured at
    60 origins (auto's MASE at h=1/2/5), the profile from the whole long
    history had the seasonal pathway win backtests it then lost out of
    sample (Azure 0.86/1.04/1.27, worse than the plain pathway's
    0.77/0.96/1.26); this one gives 0.73/0.89/1.15 there, all else equal.
    A long sample covers a long step around its stamp, so those within a
    step of the first origin are left out too. A window too short to
    backtest is cut where its forecast starts. With too little left to
    learn from, there is no profile and the seasonal pathway is skipped,
    rather than given one that knows the answers.
    """
    origin = min(first_origin(request.series.size), request.series.size)
    return float(request.step_times[origin]) - long_step_seconds


def _deseasonalised(
    profile: SeasonalProfile, request: RefreshRequest, series: FloatArray
) -> tuple[FloatArray, float]:
    """``series`` minus ``profile`` along its clock, shifted to stay non-negative; and the shift."""
    base = profile.along(request.step_times[: series.size])
    shift = max(0.0, float((base - series).max()))
    return np.asarray(series - base + shift, dtype=np.float64), shift


@dataclass(frozen=True)
class _Pathway:
    selection: ModelSelection | None
    series: FloatArray
    profile: SeasonalProfile | None
    shift: float


def _select(
    request: RefreshRequest, series: FloatArray, deadline: float | None
) -> ModelSelection | None:
    """The backtest selection on ``series`` (``auto`` only; None for a fixed model)."""
    if request.model != "auto":
        return None
    return select_model(
        series,
        candidates=request.candidates,
        horizon=request.horizon,
        season_length=request.season_length,
        cpu_deadline=deadline,
    )


def _fit(
    request: RefreshRequest, series: FloatArray, selection: ModelSelection | None
) -> ForecastModel:
    if selection is None:
        return make_model(request.model, season_length=request.season_length).fit(series)
    return Auto(selection=selection, season_length=request.season_length).fit(series)


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
    comes back through :meth:`deliver` (from any thread): meanwhile the
    model it will replace goes on forecasting, and before the first one
    arrives a forecast raises :class:`ModelPendingError`.
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
        self.budget_seconds = budget_seconds
        self.submit = submit
        self._submitted: RefreshRequest | None = None
        self._arrived: Refreshed | Exception | None = None
        # The outcome installed by the last call, until take_installed() is called.
        self._installed: Refreshed | None = None
        # Why the last selection failed, while no later one has succeeded.
        self.failure: str | None = None
        # What the installed selection left unscored for lack of budget.
        self.unscored: tuple[str, ...] = ()
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

    @property
    def selecting(self) -> bool:
        """A selection has been handed to ``submit`` and has not come back."""
        return self._submitted is not None

    def deliver(self, outcome: Refreshed | Exception) -> None:
        """The outcome of the submitted selection; installed at the next forecast."""
        self._arrived = outcome

    def take_installed(self) -> Refreshed | None:
        """The selection installed since the last call of this, if any."""
        installed, self._installed = self._installed, None
        return installed

    def _take_delivery(self) -> None:
        arrived, self._arrived = self._arrived, None
        if arrived is None:
            return
        self._submitted = None
        if isinstance(arrived, Exception):
            self.failure = f"model selection failed: {arrived!r}"
        else:
            self._install(arrived)

    def _install(self, refreshed: Refreshed) -> None:
        self.fitted, self.selection = refreshed.fitted, refreshed.selection
        self.profile, self.shift = refreshed.profile, refreshed.shift
        self.plain_scale, self.seasons = refreshed.plain_scale, refreshed.seasons
        self.fitted_at, self.unscored = refreshed.selected_at, refreshed.unscored
        self.failure, self._installed, self._last_call = None, refreshed, None

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
        self._take_delivery()
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
            self._refresh(series, step_times, horizon, now, long)
        else:
            assert self.fitted is not None  # checked by _needs_refresh
            self.fitted.update(self._adjusted(series, step_times))
        if self.fitted is None:
            why = f" ({self.failure})" if self.failure else ""
            raise ModelPendingError(f"selecting a model for the first time{why}")
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

    def _refresh(
        self,
        series: FloatArray,
        step_times: FloatArray,
        horizon: int,
        now: float,
        long: TimedSeries | None,
    ) -> None:
        """Refresh now, or hand the refresh over and go on with the model there is."""
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
        )
        if self.submit is None:
            self._install(refresh_model(request))
            return
        if self._submitted is None:
            self.submit(request, self.deliver)
            self._submitted = request
        if self.fitted is not None:
            self.fitted.update(self._adjusted(series, step_times))
