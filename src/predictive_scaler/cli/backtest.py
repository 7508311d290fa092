"""``predictive-scaler backtest``: replay a load trace through predictive, hpa and oracle."""

from __future__ import annotations

import argparse
import math
from typing import Any, Literal

import numpy as np
from tqdm import tqdm

from predictive_scaler.cli.arguments import (
    add_trace_arguments,
    duration_seconds,
    load_trace,
    non_negative_int,
    positive_int,
)
from predictive_scaler.cli.backtest_report import BacktestReport, render, report
from predictive_scaler.forecasting import MODEL_NAMES
from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.forecasting.hygiene import cleaning_notes
from predictive_scaler.scaling.spec import DEFAULT_OVERLOAD_BUDGET, MAX_OVERLOAD_BUDGET
from predictive_scaler.simulation import BacktestSettings, run_backtest
from predictive_scaler.simulation.backtest import (
    DEFAULT_HISTORY_SECONDS,
    DEFAULT_LONG_HISTORY_SECONDS,
    DEFAULT_LONG_STEP_SECONDS,
    DEFAULT_TARGET,
    MATCH_HPA,
)
from predictive_scaler.simulation.fallback import Fallback
from predictive_scaler.units import counted, format_duration, percentage


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
        "--step",
        type=duration_seconds,
        help="time per step, such as 30 (seconds) or 30s (default: from the trace's t_seconds)",
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
        "--when-worse-than-reactive",
        type=fallback,
        choices=list(Fallback),
        default=Fallback.WARN,
        help="as spec.comparison.whenWorseThanReactive: FollowHPA shadows the reactive HPA "
        "as the operator does and follows its count while the forecast loses to it on both "
        "overload and replica-minutes (default Warn: report only)",
    )
    backtest.add_argument(
        "--interval",
        "--level",
        dest="interval",
        type=float,
        default=0.9,
        help="prediction-interval level in (0, 1) whose upper bound is provisioned for, "
        "without an overload budget (default 0.9)",
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
        raise ValueError(f"--interval (--level) must lie in (0, 1), got {args.interval}")
    if args.plot:
        from predictive_scaler.cli.plot import require_plot_target  # noqa: PLC0415

        require_plot_target(args.plot)
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
        when_worse_than_reactive=args.when_worse_than_reactive,
        references=True,
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
    assumed = () if args.step else trace.notes  # --step replaces what was assumed
    notes = [*assumed, *history_notes(settings, step), *trace_notes(load)]
    if result.references_missing is not None:
        notes.append(f"no references: {result.references_missing}")
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


# --overload-budget's word for sizing at the target (metric.targetPerReplica).
NO_BUDGET = "none"


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


def fallback(text: str) -> Fallback:
    """A Fallback by its name; argparse's own error would not list the choices."""
    try:
        return Fallback(text)
    except ValueError:
        names = ", ".join(choice.value for choice in Fallback)
        raise argparse.ArgumentTypeError(f"want one of {names}, got {text!r}") from None
