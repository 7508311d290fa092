"""One forecast by each contender, on the inputs of :mod:`benchmarks.forecast_runs`.

A forecast with its 90 % band by a library model, by ``auto`` through the operator's path,
or by a statsforecast anchor, timed as one workload's own and reported as an ``Outcome``
instead of raising.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
from statsforecast.models import MSTL, AutoARIMA, AutoETS, AutoTheta

from benchmarks.forecast_runs import HORIZON, LEVEL, Histories
from predictive_scaler.forecasting import (
    MODEL_NAMES,
    Auto,
    ModelSelection,
    ScheduledSelection,
    make_model,
)
from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.forecasting.models.state_space import forget_recent_results

ANCHORS = ("AutoETS", "AutoARIMA", "AutoTheta", "MSTL")
# statsforecast's MSTL runs statsmodels' STL, which evaluates every LOESS at every point; R's
# stl() jumps a tenth of each window. With R's jumps MSTL on two weeks at 1 min takes 4 s, not
# 6 min, and forecasts the same to 0.1 request per minute (NASA, daily and weekly seasons).
STL_JUMP_SHARE = 0.1
# statsforecast's MSTL gives the first season this seasonal window (R's 7 + 4k, k = 1).
MSTL_SEASONAL_WINDOW = 11


@dataclass(frozen=True)
class Outcome:
    """One forecast of HORIZON steps; ``mean`` is None when the model raised."""

    mean: FloatArray | None
    lower: FloatArray | None
    upper: FloatArray | None
    seconds: float
    problem: str = ""
    auto_chose: str = ""


Job = Callable[[Histories], Outcome]
# A forecast's mean, lower and upper bound, what went wrong (if anything) and auto's choice.
NotedBand = tuple[FloatArray, FloatArray, FloatArray, str, str]


def timed(call: Callable[[], NotedBand]) -> Outcome:
    """One forecast, timed as a workload's own: an earlier model's order search on the same
    window (``arima`` and ``arima_rbf`` run before ``auto``) is not there to reuse."""
    forget_recent_results()
    start = time.process_time()
    try:
        mean, lower, upper, problem, auto_chose = call()
    except Exception as error:  # noqa: BLE001 - a failing model is a result to report
        return Outcome(None, None, None, time.process_time() - start, error_text(error))
    return Outcome(mean, lower, upper, time.process_time() - start, problem, auto_chose)


def error_text(error: Exception) -> str:
    """The error as the accuracy tables list a failure: its type, a colon, its message."""
    return f"{type(error).__name__}: {error}"


def library_band(name: str, train: FloatArray, season: int | None = None) -> NotedBand:
    model = make_model(name, season_length=season)
    forecast = model.fit(train).predict(HORIZON, LEVEL)
    problem = model.fallback_reason_ or "; ".join(forecast.notes)
    return forecast.mean, forecast.lower, forecast.upper, problem, ""


def seasonal_naive_band(histories: Histories) -> NotedBand:
    """Seasonal naive reads the value one (shortest detected) season back from the long span;
    with no season found it is naive on the recent window."""
    if not histories.seasons:
        return library_band("seasonal_naive", histories.recent.values)
    return library_band("seasonal_naive", histories.span, min(histories.seasons))


def auto_band(histories: Histories) -> NotedBand:
    """``auto`` as the operator runs it: a fresh ScheduledSelection given both histories."""
    forecaster = ScheduledSelection(Auto.name)
    forecast = forecaster.forecast_series(
        histories.recent, HORIZON, LEVEL, histories.now, long=histories.long
    )
    chose = forecaster.chosen or "?"
    return forecast.mean, forecast.lower, forecast.upper, "; ".join(forecast.notes), chose


def stl_jumps(period: int) -> dict[str, int]:
    """R's stl() jumps for a season of ``period`` steps (statsmodels' default windows)."""
    seasonal = MSTL_SEASONAL_WINDOW
    trend = math.ceil(1.5 * period / (1.0 - 1.5 / seasonal))
    trend += trend % 2 == 0
    low_pass = period + (period % 2 == 0)
    return {
        "seasonal_jump": math.ceil(seasonal * STL_JUMP_SHARE),
        "trend_jump": math.ceil(trend * STL_JUMP_SHARE),
        "low_pass_jump": math.ceil(low_pass * STL_JUMP_SHARE),
    }


def statsforecast_band(model: Any, train: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    percent = round(LEVEL * 100)
    result = model.forecast(y=train, h=HORIZON, level=[percent])
    mean, lower, upper = (
        np.asarray(result[key], dtype=np.float64)
        for key in ("mean", f"lo-{percent}", f"hi-{percent}")
    )
    if not (np.isfinite(mean).all() and np.isfinite(lower).all() and np.isfinite(upper).all()):
        raise FloatingPointError("non-finite forecast")
    # Loads cannot be negative; the library clips its forecasts the same way.
    mean = np.clip(mean, 0.0, None)
    return mean, np.clip(np.minimum(lower, mean), 0.0, None), np.maximum(upper, mean)


def anchor_band(name: str, histories: Histories) -> NotedBand:
    """AutoETS, AutoARIMA and AutoTheta on the recent window (season 1: 6 h hold no day);
    MSTL on the long span at the trace's step with the detected seasons."""
    recent = histories.recent.values
    if name != "MSTL":
        model = {"AutoETS": AutoETS, "AutoARIMA": AutoARIMA, "AutoTheta": AutoTheta}[name]()
        return (*statsforecast_band(model, recent), "", "")
    seasons = [s for s in histories.seasons if 2 * s <= histories.span.size]
    if not seasons:
        # MSTL without a season is its trend model alone.
        band = statsforecast_band(AutoETS(model="ZZN"), recent)
        return (*band, "no season found: its trend model (AutoETS ZZN) on the recent window", "")
    mstl = MSTL(season_length=seasons, stl_kwargs=stl_jumps(min(seasons)))
    return (*statsforecast_band(mstl, histories.span), "", "")


def recent_band(name: str, histories: Histories) -> NotedBand:
    return library_band(name, histories.recent.values)


def job_for(band: Callable[[Histories], NotedBand]) -> Job:
    return lambda histories: timed(lambda: band(histories))


def model_jobs() -> dict[str, Job]:
    """Every library model, then every anchor, in report order."""
    jobs: dict[str, Job] = {}
    for name in MODEL_NAMES:
        if name == Auto.name:
            jobs[name] = job_for(auto_band)
        elif name == "seasonal_naive":
            jobs[name] = job_for(seasonal_naive_band)
        else:
            jobs[name] = job_for(partial(recent_band, name))
    return jobs | {name: job_for(partial(anchor_band, name)) for name in ANCHORS}


# The speed half times one plain series (no long history) per model.
SeriesJob = Callable[[FloatArray, int | None], Outcome]


def library_series_job(name: str, selection: ModelSelection | None = None) -> SeriesJob:
    def job(y: FloatArray, season: int | None) -> Outcome:
        def call() -> NotedBand:
            extra = {"selection": selection} if name == Auto.name and selection is not None else {}
            model = make_model(name, season_length=season, **extra)
            forecast = model.fit(y).predict(HORIZON, LEVEL)
            return forecast.mean, forecast.lower, forecast.upper, "", ""

        return timed(call)

    return job


def anchor_series_job(name: str) -> SeriesJob:
    """A recent-window anchor (season 1) on one series; MSTL needs the long history."""
    model = {"AutoETS": AutoETS, "AutoARIMA": AutoARIMA, "AutoTheta": AutoTheta}[name]
    return lambda y, _season: timed(lambda: (*statsforecast_band(model(), y), "", ""))
