"""One backtest: forecast a trace once, replay every policy and the headroom sweeps over it."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from predictive_scaler.forecasting import ScheduledSelection
from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.forecasting.refresh import DEFAULT_REFRESH_SECONDS
from predictive_scaler.simulation.forecasts import (
    ForecastTable,
    LongWindow,
    Progress,
    forecast_trace,
)
from predictive_scaler.simulation.matched import Matched, compare
from predictive_scaler.simulation.policies import HpaPolicy, OraclePolicy, PredictivePolicy
from predictive_scaler.simulation.replay import (
    ReplayConfig,
    ReplayPolicy,
    ReplayResult,
    default_capacity,
    replay,
)

DEFAULT_TARGET = 0.7
# The predictive scaler's headroom: the share of a replica's capacity its
# interval's upper bound may fill. It runs past 1 because the upper bound
# already carries a margin above the expected load, which the reactive
# baseline has only through its utilisation target.
PREDICTIVE_SWEEP = tuple(round(u, 2) for u in np.arange(0.40, 1.501, 0.05))
# design.md: the baseline's U between 0.5 and 0.9.
BASELINE_SWEEP = tuple(round(u, 2) for u in np.arange(0.50, 0.901, 0.05))
DEFAULT_HISTORY_SECONDS = 6 * 3600.0
DEFAULT_LONG_HISTORY_SECONDS = 15 * 86_400.0
DEFAULT_LONG_STEP_SECONDS = 300.0
MIN_HISTORY_STEPS = 60


@dataclass(frozen=True)
class BacktestSettings:
    """Everything a backtest depends on besides the trace; the defaults are design.md's."""

    startup_steps: int = 1
    target: float = DEFAULT_TARGET
    interval: float = 0.9
    model: str = "auto"
    history_seconds: float = DEFAULT_HISTORY_SECONDS
    refresh_seconds: float = DEFAULT_REFRESH_SECONDS
    season_length: int | None = None
    # The operator's long history (spec.forecast.longHistory / longStep defaults).
    long_history_seconds: float = DEFAULT_LONG_HISTORY_SECONDS
    long_step_seconds: float = DEFAULT_LONG_STEP_SECONDS
    seasonality_seconds: float | None = None
    capacity: float | None = None
    predictive_sweep: Sequence[float] = PREDICTIVE_SWEEP
    baseline_sweep: Sequence[float] = BASELINE_SWEEP

    def __post_init__(self) -> None:
        if not 0.0 < self.target <= 1.0:
            raise ValueError(f"target utilisation must lie in (0, 1], got {self.target}")
        if self.startup_steps < 0:
            raise ValueError(f"startup steps must be >= 0, got {self.startup_steps}")

    def history_steps(self, step_seconds: float) -> int:
        return max(MIN_HISTORY_STEPS, math.ceil(self.history_seconds / step_seconds))


@dataclass(frozen=True)
class BacktestResult:
    """Each policy at the target utilisation, the sweeps, and the matched comparison."""

    config: ReplayConfig
    settings: BacktestSettings
    policies: dict[str, ReplayResult]
    predictive_sweep: tuple[ReplayResult, ...]
    baseline_sweep: tuple[ReplayResult, ...]
    matched: Matched
    table: ForecastTable = field(repr=False)


def forecast_table(
    load: FloatArray,
    step_seconds: float,
    settings: BacktestSettings,
    *,
    horizon: int | None = None,
    progress: Progress | None = None,
) -> ForecastTable:
    """The causal forecasts the predictive policy will read; ``horizon`` may exceed its need."""
    history_steps = settings.history_steps(step_seconds)
    return forecast_trace(
        load,
        start=history_steps,
        history_steps=history_steps,
        horizon=horizon or settings.startup_steps + 1,
        level=settings.interval,
        step_seconds=step_seconds,
        forecaster=ScheduledSelection(
            settings.model,
            refresh_seconds=settings.refresh_seconds,
            season_length=settings.season_length,
            seasonality_seconds=settings.seasonality_seconds,
        ),
        long=LongWindow.of(settings.long_history_seconds, settings.long_step_seconds, step_seconds),
        progress=progress,
    )


def run_backtest(
    load: FloatArray,
    step_seconds: float,
    settings: BacktestSettings,
    *,
    table: ForecastTable | None = None,
    progress: Progress | None = None,
) -> BacktestResult:
    """Replay ``predictive``, ``hpa`` and ``oracle`` (and the sweeps) over ``load``."""
    history_steps = settings.history_steps(step_seconds)
    if load.size <= history_steps + settings.startup_steps + 1:
        raise ValueError(
            f"the trace has {load.size} steps; the backtest needs more than "
            f"{history_steps} of history plus the start-up time"
        )
    config = ReplayConfig(
        capacity=settings.capacity or default_capacity(load),
        startup_steps=settings.startup_steps,
        step_seconds=step_seconds,
        start=history_steps,
    )
    if table is None:
        table = forecast_table(load, step_seconds, settings, progress=progress)

    def predictive(utilisation: float) -> ReplayPolicy:
        return PredictivePolicy(
            config,
            utilisation,
            table.forecaster,
            history_steps=history_steps,
            interval=settings.interval,
        )

    target = settings.target
    predictive_sweep = tuple(replay(load, predictive(u), config) for u in settings.predictive_sweep)
    baseline_sweep = tuple(
        replay(load, HpaPolicy(config, u), config) for u in settings.baseline_sweep
    )
    policies = {
        "predictive": replay(load, predictive(target), config),
        "hpa": replay(load, HpaPolicy(config, target), config),
        "oracle": replay(load, OraclePolicy(load, config, target), config),
        "oracle_at_full_utilisation": replay(load, OraclePolicy(load, config, 1.0), config),
    }
    matched = compare([r.outcome for r in predictive_sweep], policies["hpa"].outcome)
    return BacktestResult(
        config, settings, policies, predictive_sweep, baseline_sweep, matched, table
    )
