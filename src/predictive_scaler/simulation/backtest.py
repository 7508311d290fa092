"""One backtest: forecast a trace once, replay every policy and the headroom sweeps over it."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

import numpy as np

from predictive_scaler.forecasting import ScheduledSelection
from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.forecasting.refresh import DEFAULT_REFRESH_SECONDS
from predictive_scaler.simulation.fallback import Fallback
from predictive_scaler.simulation.forecasts import (
    CLAIRVOYANT,
    ForecastTable,
    LongWindow,
    Progress,
    clairvoyant_table,
    forecast_trace,
)
from predictive_scaler.simulation.hindsight import (
    HINDSIGHT,
    HindsightUnavailableError,
    hindsight_table,
)
from predictive_scaler.simulation.hpa import HpaPolicy
from predictive_scaler.simulation.matched import Matched, compare
from predictive_scaler.simulation.policies import OraclePolicy, PredictivePolicy
from predictive_scaler.simulation.replay import (
    UNBOUNDED_REPLICAS,
    ReplayConfig,
    ReplayResult,
    default_capacity,
    replay,
)
from predictive_scaler.simulation.shadow import ShadowSpec
from predictive_scaler.simulation.sizing import SizingTally
from predictive_scaler.units import format_duration

DEFAULT_TARGET = 0.7
# The predictive scaler's headroom: the share of a replica's capacity its
# interval's upper bound may fill. It runs past 1 because the upper bound
# already carries a margin above the expected load, which the reactive
# baseline has only through its utilisation target.
PREDICTIVE_SWEEP = tuple(round(u, 2) for u in np.arange(0.40, 1.501, 0.05))
# With an overload budget, the predictive policy is swept over budgets instead:
# from about one step a week to a fifth of the time.
BUDGET_SWEEP = (0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.015, 0.02, 0.03, 0.05, 0.08, 0.12, 0.2)
# `overloadBudget` at what the reactive baseline at the target overloads.
MATCH_HPA: Final = "hpa"
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
    # None: the predictive policy sizes at the target utilisation on the interval's
    # upper bound (spec.metric.targetPerReplica); a share (or MATCH_HPA): from the
    # capacity per replica within that overload budget (capacityPerReplica).
    overload_budget: float | Literal["hpa"] | None = None
    # comparison.whenWorseThanReactive. With FollowHPA the predictive policy shadows the
    # baseline HPA as the operator does and follows its count while it loses to it.
    when_worse_than_reactive: Fallback = Fallback.WARN
    # Also replay the policy on REFERENCES' forecasts (a few seconds a week of minutes).
    references: bool = False
    predictive_sweep: Sequence[float] = PREDICTIVE_SWEEP
    budget_sweep: Sequence[float] = BUDGET_SWEEP
    baseline_sweep: Sequence[float] = BASELINE_SWEEP

    def __post_init__(self) -> None:
        if not 0.0 < self.target <= 1.0:
            raise ValueError(f"target utilisation must lie in (0, 1], got {self.target}")
        if self.startup_steps < 0:
            raise ValueError(f"startup steps must be >= 0, got {self.startup_steps}")

    def asked_history_steps(self, step_seconds: float) -> int:
        """The steps ``history_seconds`` holds, as the operator reads them."""
        return math.ceil(self.history_seconds / step_seconds)

    def history_steps(self, step_seconds: float) -> int:
        """The steps the forecasts read: as asked, but at least MIN_HISTORY_STEPS."""
        return max(MIN_HISTORY_STEPS, self.asked_history_steps(step_seconds))

    def replay_config(self, load: FloatArray, step_seconds: float) -> ReplayConfig:
        """The replay every policy of this backtest runs in: scored after the history."""
        return ReplayConfig(
            capacity=self.capacity or default_capacity(load),
            startup_steps=self.startup_steps,
            step_seconds=step_seconds,
            start=self.history_steps(step_seconds),
        )


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
    # The budget the predictive policy kept, resolved (MATCH_HPA becomes a share).
    budget: float | None = None
    # With a budget: the predictive policy's overloaded steps beyond the threshold's
    # ceiling, load no budget could have bought off (scaling/budget.py, counted by decide).
    beyond_ceiling: int | None = None
    # Following the shadow HPA (FollowHPA): the steps the predictive policy took its count.
    followed_steps: int | None = None
    # Where the predictive policy's replicas went (its forecast, headroom, rounding, holding).
    sizing: SizingTally = field(default_factory=SizingTally)
    # With a budget: each budget sweep point's overloaded steps beyond the ceiling, as above.
    sweep_beyond_ceiling: tuple[int, ...] = ()
    # The predictive policy, as chosen, on forecasts no one can run (REFERENCES): what a
    # better forecast could still buy on this load; or why there are none.
    references: dict[str, ReplayResult] = field(default_factory=dict)
    references_missing: str | None = None

    @property
    def scored_minutes(self) -> float:
        steps = self.policies["hpa"].replicas.size
        return steps * self.config.step_seconds / 60.0

    @property
    def beyond_ceiling_minutes(self) -> float:
        """The predictive policy's overload minutes beyond the threshold's ceiling; 0 unbudgeted."""
        return (self.beyond_ceiling or 0) * self.config.step_seconds / 60.0

    @property
    def sweep_beyond_ceiling_minutes(self) -> tuple[float, ...]:
        """Each budget sweep point's overload minutes beyond the ceiling; empty unbudgeted."""
        return tuple(steps * self.config.step_seconds / 60.0 for steps in self.sweep_beyond_ceiling)

    def overload_share(self, policy: str) -> float:
        """The share of scored time ``policy`` overloaded."""
        return self.policies[policy].outcome.overload_minutes / self.scored_minutes


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


# The forecasts no one can run that ``run_backtest`` also replays the policy on: the
# least-squares rule of the load's own recent past fitted on the trace itself
# (simulation/hindsight.py), and the load's future course (simulation/forecasts.py). The
# first says what a forecaster that had learnt this load's history would buy, the second
# what a forecast that knew where the load goes would.
REFERENCES = (HINDSIGHT, CLAIRVOYANT)


def reference_tables(
    load: FloatArray, step_seconds: float, settings: BacktestSettings, horizon: int | None = None
) -> dict[str, ForecastTable]:
    """The references' forecasts from the predictive policy's first step, over its horizon
    (or ``horizon``, which may exceed it)."""
    made = {HINDSIGHT: hindsight_table, CLAIRVOYANT: clairvoyant_table}
    return {
        name: made[name](
            load,
            start=settings.history_steps(step_seconds),
            horizon=horizon or settings.startup_steps + 1,
            level=settings.interval,
            step_seconds=step_seconds,
        )
        for name in REFERENCES
    }


def resolve_budget(
    budget: float | Literal["hpa"] | None, hpa: ReplayResult, config: ReplayConfig
) -> float | None:
    """The budget as a share; MATCH_HPA is the share of time ``hpa`` overloaded.

    A baseline that never overloads is matched by the smallest budget there
    is: one step of the scored time.
    """
    if budget is None or isinstance(budget, float):
        return budget
    overloaded_steps = hpa.outcome.overload_minutes * 60.0 / config.step_seconds
    return max(overloaded_steps, 1.0) / hpa.replicas.size


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
            f"{history_steps} steps of history ({format_duration(history_steps * step_seconds)}) "
            "plus the start-up time: a longer trace, or a shorter history"
        )
    config = settings.replay_config(load, step_seconds)
    if table is None:
        table = forecast_table(load, step_seconds, settings, progress=progress)

    target = settings.target
    # The shadow a FollowHPA object keeps: the baseline HPA below, on the same load.
    follow = (
        ShadowSpec(
            capacity=config.capacity,
            target=config.capacity * target,
            step_seconds=step_seconds,
            startup_steps=config.startup_steps,
            min_replicas=1,
            max_replicas=UNBOUNDED_REPLICAS,
            behavior=None,
        )
        if settings.when_worse_than_reactive is Fallback.FOLLOW_HPA
        else None
    )

    def predictive(
        utilisation: float, budget: float | None = None, forecasts: ForecastTable = table
    ) -> PredictivePolicy:
        return PredictivePolicy(
            config,
            utilisation,
            forecasts.forecaster,
            history_steps=history_steps,
            interval=settings.interval,
            budget=budget,
            follow_hpa=follow,
        )

    hpa = replay(load, HpaPolicy(config, target), config)
    budget = resolve_budget(settings.overload_budget, hpa, config)
    swept = (
        [predictive(u) for u in settings.predictive_sweep]
        if budget is None
        else [predictive(target, b) for b in settings.budget_sweep]
    )
    predictive_sweep = tuple(replay(load, policy, config) for policy in swept)
    baseline_sweep = tuple(
        replay(load, HpaPolicy(config, u), config) for u in settings.baseline_sweep
    )
    chosen = predictive(target, budget)
    policies = {
        "predictive": replay(load, chosen, config),
        "hpa": hpa,
        "oracle": replay(load, OraclePolicy(load, config, target), config),
        "oracle_at_full_utilisation": replay(load, OraclePolicy(load, config, 1.0), config),
    }
    references: dict[str, ReplayResult] = {}
    references_missing = None
    if settings.references:
        try:
            tables = reference_tables(load, step_seconds, settings)
        except HindsightUnavailableError as error:
            references_missing = str(error)
        else:
            references = {
                name: replay(load, predictive(target, budget, forecasts), config)
                for name, forecasts in tables.items()
            }
    matched = compare([r.outcome for r in predictive_sweep], hpa.outcome)
    beyond = None if budget is None else chosen.beyond_ceiling
    sweep_beyond = () if budget is None else tuple(policy.beyond_ceiling for policy in swept)
    return BacktestResult(
        config,
        settings,
        policies,
        predictive_sweep,
        baseline_sweep,
        matched,
        table,
        budget,
        beyond,
        None if follow is None else chosen.followed_steps,
        chosen.sizing,
        sweep_beyond,
        references,
        references_missing,
    )
