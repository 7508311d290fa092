"""The scaling benchmarks' replay: forecast each workload, replay every policy, sum a fleet.

``benchmarks.scaling`` and ``benchmarks.scaling_held_aside`` replay their slices through this,
so both measure the policy the same way: the operator's forecasts at every step for each
start-up's horizon, the clairvoyant and hindsight references, ``run_backtest``'s policies and
budget sweep, the HPA's variants, and a fleet of small workloads (Google's VMs) held to one
budget.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, fields
from enum import Enum
from pathlib import Path

from benchmarks.report import REPO_TRACES
from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.simulation import BacktestSettings, Outcome, run_backtest
from predictive_scaler.simulation.backtest import MATCH_HPA, forecast_table, reference_tables
from predictive_scaler.simulation.cadence import VARIANTS, hpa_variants
from predictive_scaler.simulation.forecasts import CLAIRVOYANT, ForecastTable
from predictive_scaler.simulation.hindsight import HINDSIGHT
from predictive_scaler.simulation.sizing import SizingTally
from predictive_scaler.traces import read_trace

STARTUP_MINUTES = (1, 2, 5)


@dataclass(frozen=True)
class Workload:
    label: str
    file: str
    column: str
    steps: int
    where: tuple[tuple[str, str], ...] = ()
    first: int = 0  # the slice's first step in the trace


@dataclass(frozen=True)
class Replayed:
    """One workload's outcomes for one start-up time: policies, the budget sweep, minutes scored.

    ``policies["predictive"]`` ran with the budget at hpa's realised share.
    """

    policies: dict[str, Outcome]
    budget_sweep: tuple[Outcome, ...]
    budgets: tuple[float, ...]
    scored_minutes: float
    # Of the predictive policy's overload minutes, those beyond the threshold's ceiling.
    beyond_ceiling_minutes: float
    # Of each budget sweep point's overload minutes, those beyond the threshold's ceiling.
    sweep_beyond_ceiling_minutes: tuple[float, ...]
    # Where the predictive policy's replicas went, summed over its scored decisions.
    sizing: SizingTally = field(default_factory=SizingTally)


def startup_steps(step_seconds: float) -> list[int]:
    return sorted({math.ceil(minutes * 60 / step_seconds) for minutes in STARTUP_MINUTES})


@dataclass(frozen=True)
class Forecast:
    """A workload's load and its forecast tables, kept to replay a fleet's budget afterwards.

    ``tables`` holds the operator's forecasts for each start-up (in steps), made over that
    start-up's horizon: the horizon is what the backtest selection scores models on, so a
    table made for a longer one is not what the operator would have forecast. ``references``
    are ``run_backtest``'s forecasts no one can run, over the longest start-up's horizon: the
    clairvoyant knows the load's course (not its noise), the hindsight forecast is least
    squares of the load's recent samples, fitted on the slice it is scored on.
    """

    load: FloatArray
    step: float
    tables: dict[int, ForecastTable]
    references: dict[str, ForecastTable]


class Source(Enum):
    """Whose forecasts a replay of the policy reads: the operator's, or a reference's."""

    AUTO = "auto"
    CLAIRVOYANT = CLAIRVOYANT
    HINDSIGHT = HINDSIGHT

    def table(self, forecast: Forecast, startup: int) -> ForecastTable:
        if self is Source.AUTO:
            return forecast.tables[startup]
        return forecast.references[self.value]


@dataclass(frozen=True)
class Replays:
    """One workload at one start-up: the policy on each source's forecasts, the HPA's
    variants (legacy and default behavior, per step and every 15 s)."""

    by_source: dict[Source, Replayed]
    hpa_variants: dict[str, Outcome]


def replayed_with(forecast: Forecast, table: ForecastTable, startup: int) -> Replayed:
    """The budget sweep and the policies, the predictive one reading ``table``."""
    settings = BacktestSettings(startup_steps=startup, overload_budget=MATCH_HPA)
    result = run_backtest(forecast.load, forecast.step, settings, table=table)
    return Replayed(
        {name: replayed.outcome for name, replayed in result.policies.items()},
        tuple(r.outcome for r in result.predictive_sweep),
        tuple(settings.budget_sweep),
        result.scored_minutes,
        result.beyond_ceiling_minutes,
        result.sweep_beyond_ceiling_minutes,
        result.sizing,
    )


def replay_workload(traces: Path, workload: Workload) -> tuple[Forecast, dict[int, Replays], float]:
    """Forecast, and replay for every distinct start-up step count; (forecast, results, s)."""
    started = time.perf_counter()
    trace = read_trace(traces / workload.file, workload.column, dict(workload.where))
    load = trace.values[workload.first : workload.first + workload.steps]
    step = trace.step_seconds
    steps = startup_steps(step)
    settings = BacktestSettings()
    forecast = Forecast(
        load,
        step,
        {
            startup: forecast_table(
                load, step, dataclasses.replace(settings, startup_steps=startup)
            )
            for startup in steps
        },
        reference_tables(load, step, settings, horizon=max(steps) + 1),
    )
    results = {
        startup: Replays(
            {
                source: replayed_with(forecast, source.table(forecast, startup), startup)
                for source in Source
            },
            hpa_variants(
                load,
                dataclasses.replace(settings, startup_steps=startup).replay_config(load, step),
                settings.target,
            ),
        )
        for startup in steps
    }
    return forecast, results, time.perf_counter() - started


def at_fleet_budget(
    parts: Sequence[tuple[Forecast, dict[int, Replays]]], startup: int, source: Source
) -> list[Replayed]:
    """A fleet's workloads replayed with one budget: the whole fleet's hpa overload share.

    A user sets one budget for a fleet; matching each small workload to its own
    hpa share would hand the calm ones a budget of one step in a day.
    """
    replayed = [p[1][startup].by_source[source] for p in parts]
    overload = sum(r.policies["hpa"].overload_minutes for r in replayed)
    minutes = sum(r.scored_minutes for r in replayed)
    steps = sum(r.scored_minutes * 60 / p[0].step for r, p in zip(replayed, parts, strict=True))
    budget = max(overload / minutes, 1.0 / steps)
    settings = BacktestSettings(startup_steps=startup, overload_budget=budget, budget_sweep=())
    fleet = []
    for (forecast, _), one in zip(parts, replayed, strict=True):
        table = source.table(forecast, startup)
        result = run_backtest(forecast.load, forecast.step, settings, table=table)
        policies = {**one.policies, "predictive": result.policies["predictive"].outcome}
        fleet.append(
            Replayed(
                policies,
                one.budget_sweep,
                one.budgets,
                one.scored_minutes,
                result.beyond_ceiling_minutes,
                one.sweep_beyond_ceiling_minutes,
                result.sizing,
            )
        )
    return fleet


def add(outcomes: Sequence[Outcome]) -> Outcome:
    totals = {f.name: sum(getattr(o, f.name) for o in outcomes) for f in fields(Outcome)}
    return Outcome(**totals)


def combine(parts: Sequence[Replayed]) -> Replayed:
    """A fleet's figures: every policy and sweep point summed over its workloads."""
    first = parts[0]
    return Replayed(
        {name: add([p.policies[name] for p in parts]) for name in first.policies},
        tuple(add(points) for points in zip(*(p.budget_sweep for p in parts), strict=True)),
        first.budgets,
        sum(p.scored_minutes for p in parts),
        sum(p.beyond_ceiling_minutes for p in parts),
        tuple(map(sum, zip(*(p.sweep_beyond_ceiling_minutes for p in parts), strict=True))),
        sum((p.sizing for p in parts), SizingTally()),
    )


@dataclass(frozen=True)
class Row:
    """A trace at one start-up (in steps): the policy on each source's forecasts, the HPAs."""

    label: str
    step: float
    startup: int
    by_source: dict[Source, Replayed]
    hpa_variants: dict[str, Outcome]

    @property
    def setting(self) -> str:
        return f"{self.startup} steps of {self.step:g} s"

    @property
    def auto(self) -> Replayed:
        return self.by_source[Source.AUTO]


def replay_all(traces: Path, chosen: Sequence[Workload], workers: int) -> list[Row]:
    """Every workload replayed (in ``workers`` processes); a row per trace and start-up."""
    by_label: dict[str, list[tuple[Forecast, dict[int, Replays]]]] = {}
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(replay_workload, traces, w) for w in chosen]
        for done, (workload, future) in enumerate(zip(chosen, futures, strict=True), 1):
            forecast, results, seconds = future.result()
            by_label.setdefault(workload.label, []).append((forecast, results))
            print(
                f"[{done}/{len(chosen)}] {workload.label} {dict(workload.where)}: {seconds:.0f} s",
                flush=True,
            )
    rows: list[Row] = []
    for label, parts in by_label.items():
        step = parts[0][0].step
        for startup in startup_steps(step):
            fleets = {
                source: combine(
                    at_fleet_budget(parts, startup, source)
                    if len(parts) > 1
                    else [parts[0][1][startup].by_source[source]]
                )
                for source in Source
            }
            hpas = {
                name: add([p[1][startup].hpa_variants[name] for p in parts]) for name in VARIANTS
            }
            rows.append(Row(label, step, startup, fleets, hpas))
    return rows


def replay_arguments(doc: str) -> argparse.ArgumentParser:
    """The options of a replay benchmark: where the traces are, the report goes, how wide."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--traces", type=Path, default=REPO_TRACES)
    parser.add_argument("--output", type=Path, default=Path("BENCHMARKS.md"))
    parser.add_argument("--workers", type=int, default=2)
    return parser


def parse_replay_arguments(
    parser: argparse.ArgumentParser, argv: Sequence[str] | None
) -> argparse.Namespace:
    args = parser.parse_args(argv)
    if not (args.traces / "README.md").is_file():
        parser.error(f"no traces at {args.traces}")
    return args
