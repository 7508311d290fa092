"""The model selection handed to a worker: a pure function of a picklable request.

:func:`refresh_model` finds the recent window's cycle and the long
history's seasons, selects on the window and on the window minus the
seasons' profile, and fits what takes part. It imports nothing of the
forecaster that asked for it (:mod:`.refresh`), so the operator can run it
in another process while the fitted model it replaces goes on forecasting.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field

from predictive_scaler.forecasting.auto import Auto, ModelSelection, select_model
from predictive_scaler.forecasting.backtest import first_origin
from predictive_scaler.forecasting.base import ForecastModel
from predictive_scaler.forecasting.cycles import find_cycle
from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.forecasting.known_seasons import SeasonKnowledge, season_knowledge
from predictive_scaler.forecasting.pathways import Pathway, deseasonalised, pathways_to_use
from predictive_scaler.forecasting.registry import make_model
from predictive_scaler.forecasting.seasons import SeasonalProfile, TimedSeries

# CPU seconds one selection may spend scoring candidates (both pathways) before
# it keeps the best scored so far: about three times the dearest measured
# (3.6 s, auto with seasons on 10,800 points).
DEFAULT_SELECTION_BUDGET_SECONDS = 10.0


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
    # The seasons the last selection found: they stay found on weaker evidence.
    seasons_held: tuple[float, ...] = ()


@dataclass(frozen=True)
class Refreshed:
    """A selection's outcome: the fitted pathways (their mean forecasts) and their backtests."""

    pathways: tuple[Pathway, ...]
    seasons: SeasonKnowledge | None
    plain_scale: float
    selected_at: float
    cpu_seconds: float
    # Candidates of either pathway the budget left unscored; the seasonal
    # pathway as a whole when the budget was spent before it.
    unscored: tuple[str, ...] = ()
    # The recent window's short cycle used as its season (cycles.py), in seconds.
    cycle_seconds: float | None = None

    @property
    def over_budget(self) -> bool:
        return bool(self.unscored)


def refresh_model(request: RefreshRequest) -> Refreshed:
    """Select on the window and on the window minus the seasons' profile; fit what takes part.

    Both selections run before anything is fitted, so a pathway left out
    (:func:`~predictive_scaler.forecasting.pathways.pathways_to_use`) does
    not pay for its final fit. Once ``budget_seconds`` of CPU are spent, no
    further candidate is scored; the best scored so far is fitted.
    """
    began = time.process_time()
    deadline = None if request.budget_seconds is None else began + request.budget_seconds
    step = float(request.step_times[1] - request.step_times[0])
    cycle = _window_cycle(request, step)
    if cycle is not None:
        request = dataclasses.replace(request, season_length=cycle)
    knowledge, profile = (
        season_knowledge(
            request.long,
            request.seasonality_seconds,
            backtest_cut(request, request.long.step_seconds),
            request.seasons_held,
        )
        if request.long is not None
        else (None, None)
    )
    series = request.series
    plain = _select(request, series, deadline)
    unscored = list(plain.unscored if plain is not None else ())
    pathways = [_Selected(plain, series, None, 0.0)]
    if profile is not None and knowledge is not None:
        if deadline is not None and time.process_time() > deadline:
            unscored.append(f"the seasonal profile of {knowledge.summary()}")
        else:
            adjusted, shift = deseasonalised(profile, request.step_times, series)
            seasonal = _select(request, adjusted, deadline)
            unscored.extend(seasonal.unscored if seasonal is not None else ())
            use_plain, use_seasonal = pathways_to_use(plain, seasonal)
            pathways = [
                *(pathways if use_plain else ()),
                *((_Selected(seasonal, adjusted, profile, shift),) if use_seasonal else ()),
            ]
            knowledge = dataclasses.replace(knowledge, in_use=use_seasonal)
    return Refreshed(
        pathways=tuple(
            Pathway(_fit(request, way.series, way.selection), way.selection, way.profile, way.shift)
            for way in pathways
        ),
        seasons=knowledge,
        plain_scale=plain.scale if plain is not None else 1.0,
        selected_at=request.now,
        cpu_seconds=time.process_time() - began,
        unscored=tuple(unscored),
        cycle_seconds=None if cycle is None else cycle * step,
    )


def _window_cycle(request: RefreshRequest, step_seconds: float) -> int | None:
    """A short cycle of the recent window (cycles.py), for ``auto`` with no season configured."""
    if request.model != "auto" or request.season_length is not None:
        return None
    return find_cycle(request.series, step_seconds)


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


@dataclass(frozen=True)
class _Selected:
    """A pathway selected and not yet fitted."""

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
