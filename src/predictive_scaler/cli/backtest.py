"""``predictive-scaler backtest``: replay a load trace through predictive, hpa and oracle."""

from __future__ import annotations

import argparse
import math
from collections import Counter
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict
from tqdm import tqdm

from predictive_scaler.cli.arguments import (
    add_trace_arguments,
    duration_seconds,
    load_trace,
    non_negative_int,
    positive_int,
)
from predictive_scaler.forecasting import MODEL_NAMES
from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.forecasting.hygiene import cleaning_notes
from predictive_scaler.scaling.budget import HIGHEST
from predictive_scaler.scaling.spec import DEFAULT_OVERLOAD_BUDGET, MAX_OVERLOAD_BUDGET
from predictive_scaler.simulation import (
    BacktestResult,
    BacktestSettings,
    Outcome,
    ReplayResult,
    run_backtest,
)
from predictive_scaler.simulation.backtest import (
    DEFAULT_HISTORY_SECONDS,
    DEFAULT_LONG_HISTORY_SECONDS,
    DEFAULT_LONG_STEP_SECONDS,
    DEFAULT_TARGET,
    MATCH_HPA,
)
from predictive_scaler.units import counted, format_duration, percentage


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class ElasticityReport(Frozen):
    """The SPEC RG elasticity metrics (Herbst et al., TOMPECS 2018), in percent."""

    under_accuracy: float
    over_accuracy: float
    under_timeshare: float
    over_timeshare: float
    instability: float


class OutcomeReport(Frozen):
    overload_minutes: float
    replica_minutes: float
    scaling_actions: int
    unserved: float
    elasticity: ElasticityReport

    @classmethod
    def of(cls, outcome: Outcome) -> OutcomeReport:
        return cls(**_fields(outcome))


def _fields(outcome: Outcome) -> dict[str, Any]:
    return {
        **vars(outcome),
        "elasticity": ElasticityReport(**outcome.elasticity.metrics()),
    }


class SweepPoint(OutcomeReport):
    utilisation: float
    overload_budget: float | None = None


class BudgetReport(Frozen):
    """The overload budget the predictive policy steered to, and the share it realised."""

    budget: float
    matched_to_hpa: bool
    realised: float
    hpa_realised: float
    # Predictive overload minutes whose load lay beyond what the threshold's
    # ceiling provisions: load no forecast saw coming, that no budget buys off.
    beyond_ceiling_minutes: float


class MatchedReport(Frozen):
    """Reductions against hpa at U = target (0.3 = 30 % fewer); null when they do not exist."""

    overload_reduction_at_hpa_cost: float | None
    cost_reduction_at_hpa_overload: float | None
    overload_minutes_at_hpa_cost: float | None
    replica_minutes_at_hpa_overload: float | None
    notes: list[str]


class BacktestReport(Frozen):
    """What ``predictive-scaler backtest --json`` prints: one JSON object."""

    trace: str
    column: str
    step_seconds: float
    steps: int
    scored_steps: int
    capacity_per_replica: float
    startup_steps: int
    target_utilisation: float
    interval: float
    model: str
    policies: dict[str, OutcomeReport]
    matched: MatchedReport
    # Cost of a policy over the oracle's at the target, and at 100 % utilisation.
    cost_over_oracle: dict[str, float]
    cost_over_oracle_at_full_utilisation: dict[str, float]
    oracle_at_full_utilisation: OutcomeReport
    sweeps: dict[str, list[SweepPoint]]
    chosen_models: dict[str, int]
    overload_budget: BudgetReport | None = None
    # What in the trace itself bends the figures (glitches, what the forecasts read as 0).
    notes: list[str]


def add_parser(commands: Any) -> None:
    backtest = commands.add_parser(
        "backtest",
        help="replay a load trace through the predictive policy, the HPA and an oracle",
        description="Replay a CSV load trace (design.md section 5): every policy decides "
        "each step from the load before it; new replicas serve after --startup steps. "
        "Without --trace, the bundled 3-day NASA HTTP slice is used.",
    )
    add_trace_arguments(backtest)
    backtest.add_argument(
        "--step", type=float, help="seconds per step (default: from the trace's t_seconds)"
    )
    backtest.add_argument(
        "--startup",
        type=non_negative_int,
        default=2,
        help="steps before a new replica serves (default 2)",
    )
    backtest.add_argument(
        "--target",
        type=float,
        default=DEFAULT_TARGET,
        help=f"target utilisation U in (0, 1] for every policy (default {DEFAULT_TARGET})",
    )
    backtest.add_argument(
        "--model", default="auto", choices=MODEL_NAMES, help="forecasting model (default: auto)"
    )
    backtest.add_argument(
        "--overload-budget",
        type=overload_budget,
        default=DEFAULT_OVERLOAD_BUDGET,
        help="size predictive replicas from the capacity per replica so that the load exceeds "
        "what ready pods serve at most this share of the time, as spec.scaling.overloadBudget "
        f"with metric.capacityPerReplica (default {DEFAULT_OVERLOAD_BUDGET * 100:g}%%, the CRD's); "
        "'hpa' for the share the reactive HPA overloads; 'none' to size at the target on the "
        "interval's upper bound instead, as metric.targetPerReplica",
    )
    backtest.add_argument(
        "--interval",
        type=float,
        default=0.9,
        help="prediction-interval level whose upper bound is provisioned for (default 0.9)",
    )
    backtest.add_argument(
        "--history",
        type=duration_seconds,
        default=DEFAULT_HISTORY_SECONDS,
        help="history window each forecast sees, e.g. 6h (default 6h)",
    )
    backtest.add_argument(
        "--long-history",
        type=duration_seconds,
        default=DEFAULT_LONG_HISTORY_SECONDS,
        help="long history the seasons are found in, as spec.forecast.longHistory (default 15d)",
    )
    backtest.add_argument(
        "--long-step",
        type=duration_seconds,
        default=DEFAULT_LONG_STEP_SECONDS,
        help="sample spacing of the long history (default 5m)",
    )
    backtest.add_argument(
        "--seasonality",
        type=duration_seconds,
        help="the load's season, as spec.forecast.seasonality (default: looked for)",
    )
    backtest.add_argument(
        "--season-length", type=positive_int, help="season in steps, for seasonal models"
    )
    backtest.add_argument(
        "--steps", type=positive_int, help="replay only the first N steps of the trace"
    )
    backtest.add_argument("--json", action="store_true", help="print one JSON object")
    backtest.add_argument("--plot", metavar="FILE.png", help="draw load and capacity to FILE")
    backtest.set_defaults(run=run, render=render)


def run(args: argparse.Namespace) -> BacktestReport:
    if not 0.0 < args.target <= 1.0:
        raise ValueError(f"--target must lie in (0, 1], got {args.target}")
    if not 0.0 < args.interval < 1.0:
        raise ValueError(f"--interval must lie in (0, 1), got {args.interval}")
    if args.step is not None and args.step <= 0:
        raise ValueError(f"--step must be > 0, got {args.step}")
    if args.plot:
        from predictive_scaler.cli.plot import require_matplotlib  # noqa: PLC0415

        require_matplotlib()  # fail before a long replay, not after it
    trace = load_trace(args)
    load = trace.values[: args.steps] if args.steps else trace.values
    step = args.step or trace.step_seconds
    settings = BacktestSettings(
        startup_steps=args.startup,
        target=args.target,
        interval=args.interval,
        model=args.model,
        history_seconds=args.history,
        season_length=args.season_length,
        long_history_seconds=args.long_history,
        long_step_seconds=args.long_step,
        seasonality_seconds=args.seasonality,
        overload_budget=args.overload_budget,
    )
    with tqdm(
        total=max(0, load.size - settings.history_steps(step)),
        desc="forecasting",
        unit="step",
        disable=None,  # only on a terminal
        leave=False,
    ) as bar:

        def advance(done: int, total: int) -> None:
            bar.update(done - bar.n)

        result = run_backtest(load, step, settings, progress=advance)
    if args.plot:
        from predictive_scaler.cli.plot import plot_backtest  # noqa: PLC0415

        plot_backtest(load, result, args.plot, title=f"{trace.source} [{trace.column}]")
    notes = [*history_notes(settings, step), *trace_notes(load)]
    return report(result, trace.source, trace.column, load.size, notes)


def history_notes(settings: BacktestSettings, step_seconds: float) -> list[str]:
    """Where the backtest reads more history than the operator would with the same window."""
    asked = settings.asked_history_steps(step_seconds)
    read = settings.history_steps(step_seconds)
    if read == asked:
        return []
    return [
        f"--history {format_duration(settings.history_seconds)} is "
        f"{counted(asked, 'step')} of {format_duration(step_seconds)}; the forecasts read "
        f"{read} ({format_duration(read * step_seconds)}), the fewest a backtest scores "
        f"models on, where the operator, with the same spec.forecast.history, reads {asked}"
    ]


# A sample this many times the load's 99th percentile is read as a glitch (the 99.9th,
# the capacity's, holds a glitch itself in a trace under 1,000 samples).
GLITCH_FACTOR = 100.0
GLITCH_PERCENTILE = 99.0


def trace_notes(load: FloatArray) -> list[str]:
    """What in the trace bends the figures, in words."""
    notes = [f"the forecasts read {note}" for note in cleaning_notes(load)]
    finite = load[np.isfinite(load)]
    if not finite.size:
        return notes
    peak, largest = float(np.percentile(finite, GLITCH_PERCENTILE)), float(finite.max())
    if peak > 0.0 and largest > GLITCH_FACTOR * peak:
        notes.append(
            f"step {int(np.flatnonzero(load == largest)[0])} holds {largest:.4g}, "
            f"{largest / peak:.3g} times the load's 99th percentile: a glitch? The oracle "
            "provisions for it, so cost/oracle reads low"
        )
    return notes


def report(
    result: BacktestResult, source: str, column: str, steps: int, notes: list[str]
) -> BacktestReport:
    policies = {name: OutcomeReport.of(result.policies[name].outcome) for name in POLICIES}
    oracle_full = result.policies["oracle_at_full_utilisation"].outcome
    matched = result.matched
    return BacktestReport(
        trace=source,
        column=column,
        step_seconds=result.config.step_seconds,
        steps=steps,
        scored_steps=steps - result.config.start,
        capacity_per_replica=result.config.capacity,
        startup_steps=result.config.startup_steps,
        target_utilisation=result.settings.target,
        interval=result.settings.interval,
        model=result.settings.model,
        policies=policies,
        matched=MatchedReport(
            overload_reduction_at_hpa_cost=matched.overload_reduction_at_baseline_cost,
            cost_reduction_at_hpa_overload=matched.cost_reduction_at_baseline_overload,
            overload_minutes_at_hpa_cost=matched.overload_at_baseline_cost,
            replica_minutes_at_hpa_overload=matched.cost_at_baseline_overload,
            notes=list(matched.notes),
        ),
        cost_over_oracle={
            name: policies[name].replica_minutes / policies["oracle"].replica_minutes
            for name in ("predictive", "hpa")
        },
        cost_over_oracle_at_full_utilisation={
            name: policies[name].replica_minutes / oracle_full.replica_minutes
            for name in ("predictive", "hpa", "oracle")
        },
        oracle_at_full_utilisation=OutcomeReport.of(oracle_full),
        sweeps={
            "predictive": [sweep_point(r) for r in result.predictive_sweep],
            "hpa": [sweep_point(r) for r in result.baseline_sweep],
        },
        chosen_models=dict(Counter(result.table.models).most_common()),
        overload_budget=None
        if result.budget is None
        else BudgetReport(
            budget=result.budget,
            matched_to_hpa=result.settings.overload_budget == MATCH_HPA,
            realised=result.overload_share("predictive"),
            hpa_realised=result.overload_share("hpa"),
            beyond_ceiling_minutes=result.beyond_ceiling_minutes,
        ),
        notes=notes,
    )


POLICIES = ("predictive", "hpa", "oracle")
# --overload-budget's word for sizing at the target (metric.targetPerReplica).
NO_BUDGET = "none"


def sweep_point(result: ReplayResult) -> SweepPoint:
    return SweepPoint(
        utilisation=result.utilisation, overload_budget=result.budget, **_fields(result.outcome)
    )


def overload_budget(text: str) -> float | Literal["hpa"] | None:
    """ "1%" as 0.01, "hpa", or "none" (no budget: the target); argparse's error names the flag."""
    if text == MATCH_HPA:
        return MATCH_HPA
    if text == NO_BUDGET:
        return None
    try:
        share = percentage(text)
    except ValueError:
        share = math.nan
    if not 0.0 < share <= MAX_OVERLOAD_BUDGET:
        raise argparse.ArgumentTypeError(
            f"expected a share in (0%, 50%] such as 1%, hpa or none: {text!r}"
        )
    return share


def percent(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.1%}".replace("+", "")


def render(report: BacktestReport) -> str:
    minutes = report.step_seconds / 60.0
    lines = [
        f"{report.trace} [{report.column}]: {report.steps} steps of {report.step_seconds:g}s, "
        f"{report.scored_steps} scored ({report.scored_steps * minutes:.0f} min)",
        f"capacity {report.capacity_per_replica:.4g} per replica per step (p99.9 / 20), "
        f"start-up {report.startup_steps} steps, target utilisation {report.target_utilisation:g}, "
        f"model {report.model}, interval {report.interval:.0%}",
        "",
        f"{'policy':<12} {'overload min':>13} {'replica-min':>12} {'actions':>8} "
        f"{'unserved':>12} {'cost/oracle':>12} {'cost/oracle@100%':>17}",
    ]
    full = report.cost_over_oracle_at_full_utilisation
    for name, outcome in [*report.policies.items()]:
        over_oracle = report.cost_over_oracle.get(name, 1.0)
        lines.append(
            f"{name:<12} {outcome.overload_minutes:>13.0f} {outcome.replica_minutes:>12.0f} "
            f"{outcome.scaling_actions:>8} {outcome.unserved:>12.4g} {over_oracle:>12.2f} "
            f"{full[name]:>17.2f}"
        )
    lines += [
        "",
        "elasticity (SPEC RG, Herbst et al. 2018; % of demand, % of time; demand = replicas "
        "the load needs at 100 %, supply = ready replicas):",
        f"{'policy':<12} {'under acc.':>11} {'over acc.':>10} {'under time':>11} "
        f"{'over time':>10} {'instability':>12}",
    ]
    for name, outcome in report.policies.items():
        scored = outcome.elasticity
        lines.append(
            f"{name:<12} {scored.under_accuracy:>10.1f}% {scored.over_accuracy:>9.1f}% "
            f"{scored.under_timeshare:>10.1f}% {scored.over_timeshare:>9.1f}% "
            f"{scored.instability:>11.1f}%"
        )
    budget = report.overload_budget
    if budget is not None:
        predictive = report.policies["predictive"]
        source = " (hpa's share)" if budget.matched_to_hpa else ""
        lines += [
            "",
            f"overload budget {budget.budget:.3%}{source}: predictive overloaded "
            f"{budget.realised:.3%} of the time ({budget.realised / budget.budget:.2f}x the "
            f"budget), hpa {budget.hpa_realised:.3%}",
            f"  {budget.beyond_ceiling_minutes:.0f} of its {predictive.overload_minutes:.0f} "
            f"overload minutes came above what the highest threshold ({HIGHEST:g} forecast "
            "spreads) provisions: load the forecast did not see coming, which no budget "
            "buys off",
        ]
    matched = report.matched
    swept = "overload budget" if budget is not None else "headroom"
    lines += [
        "",
        f"matched against hpa at the target utilisation (sweeping the predictive {swept}):",
        f"  overload minutes at hpa's cost:   {percent(matched.overload_reduction_at_hpa_cost)} "
        "fewer",
        f"  replica-minutes at hpa's overload: {percent(matched.cost_reduction_at_hpa_overload)} "
        "fewer",
    ]
    lines += [f"  note: {note}" for note in matched.notes]
    models = ", ".join(f"{name} {count}" for name, count in report.chosen_models.items())
    lines += ["", f"models used (steps): {models}"]
    lines += [f"note: {note}" for note in report.notes]
    return "\n".join(lines)
