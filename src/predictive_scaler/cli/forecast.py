"""``predictive-scaler forecast``: forecast the end of a load trace."""

from __future__ import annotations

import argparse
from typing import Any

from pydantic import BaseModel, ConfigDict

from predictive_scaler.cli.arguments import (
    add_trace_arguments,
    load_trace,
    points_or_duration,
    positive_int,
)
from predictive_scaler.forecasting import MODEL_NAMES, Auto, make_model
from predictive_scaler.forecasting.hygiene import cleaning_notes
from predictive_scaler.forecasting.selection import WHOLE_SELECTION
from predictive_scaler.units import counted


class ForecastStep(BaseModel):
    model_config = ConfigDict(frozen=True)

    step: int
    seconds_ahead: float
    mean: float
    lower: float
    upper: float


class ForecastReport(BaseModel):
    """What ``predictive-scaler forecast --json`` prints: one JSON object."""

    model_config = ConfigDict(frozen=True)

    trace: str
    column: str
    points: int
    step_seconds: float
    last_value: float
    model: str
    level: float
    forecast: list[ForecastStep]
    backtest_errors: dict[str, float | None] | None
    notes: list[str]


def add_parser(commands: Any) -> None:
    forecast = commands.add_parser(
        "forecast",
        help="forecast a load trace with one model (or auto selection)",
        description="Forecast the end of a CSV load trace. Without --trace, a bundled "
        "3-day slice of the NASA HTTP 1995 trace is used.",
    )
    add_trace_arguments(forecast)
    forecast.add_argument(
        "--model",
        default="auto",
        choices=MODEL_NAMES,
        help="model name (default: auto, backtest-based selection)",
    )
    forecast.add_argument("--horizon", type=positive_int, default=5, help="steps ahead (default 5)")
    forecast.add_argument(
        "--level",
        "--interval",
        dest="level",
        type=float,
        default=0.8,
        help="prediction-interval level in (0, 1) (default 0.8; --interval as in backtest)",
    )
    forecast.add_argument(
        "--season-length",
        type=positive_int,
        help="season in steps (e.g. 1440 for a day of minutes)",
    )
    forecast.add_argument(
        "--history",
        type=points_or_duration,
        help="use only the last N points, or the last duration such as 6h (default: all)",
    )
    forecast.add_argument("--json", action="store_true", help="print one JSON object")
    forecast.set_defaults(run=run, render=render_forecast)


# Further ahead than a week of minutes is no forecast an autoscaler acts on, and a
# million steps took 10 s and 1.8 GB.
MAX_HORIZON = 10_000


def run(args: argparse.Namespace) -> ForecastReport:
    if not 0.0 < args.level < 1.0:
        raise ValueError(f"--level (--interval) must lie in (0, 1), got {args.level}")
    if args.horizon > MAX_HORIZON:
        raise ValueError(f"--horizon must be at most {MAX_HORIZON:,} steps, got {args.horizon:,}")
    trace = load_trace(args)
    values = (
        trace.values[-args.history.points_at(trace.step_seconds) :]
        if args.history
        else trace.values
    )
    params = {"season_length": args.season_length} if args.season_length else {}
    try:
        model = make_model(args.model, **params).fit(values)
        forecast = model.predict(args.horizon, args.level)
    except ValueError as error:
        raise ValueError(f"{trace.source} [{trace.column}]: {error}") from error
    backtest = None
    notes = [*trace.notes, *cleaning_notes(values), *forecast.notes]
    if isinstance(model, Auto) and not model.is_degraded:
        backtest = {
            name: (score if score != float("inf") else None)
            for name, score in model.backtest_errors_.items()
        }
        notes.append(f"auto chose {model.chosen_}")
        notes += [
            why if name == WHOLE_SELECTION else f"{name} failed in backtest: {why}"
            for name, why in model.selection_.failures
        ]
        notes += [f"{name} passed over: {why}" for name, why in model.skipped_]
    steps = [
        ForecastStep(
            step=k + 1,
            seconds_ahead=(k + 1) * trace.step_seconds,
            mean=float(forecast.mean[k]),
            lower=float(forecast.lower[k]),
            upper=float(forecast.upper[k]),
        )
        for k in range(forecast.horizon)
    ]
    return ForecastReport(
        trace=trace.source,
        column=trace.column,
        points=len(values),
        step_seconds=trace.step_seconds,
        last_value=float(values[-1]),
        model=model.name,
        level=args.level,
        forecast=steps,
        backtest_errors=backtest,
        notes=notes,
    )


def render_forecast(report: ForecastReport) -> str:
    lines = [
        f"{report.trace} [{report.column}]: {counted(report.points, 'point')}, "
        f"step {report.step_seconds:g}s,"
        f" last value {report.last_value:.4g}",
        f"model {report.model}, {report.level:.0%} prediction interval",
        "",
        f"{'step':>4}  {'ahead':>8}  {'forecast':>12}  {'lower':>12}  {'upper':>12}",
    ]
    lines += [
        f"{s.step:>4}  {s.seconds_ahead:>7g}s  {s.mean:>12.4g}  {s.lower:>12.4g}  {s.upper:>12.4g}"
        for s in report.forecast
    ]
    if report.backtest_errors is not None:
        lines += ["", "backtest error (scaled, under-forecasts weigh 3x; lower is better):"]
        # Best first, failures last; names as wide as the longest (combinations are long).
        ranked = sorted(
            report.backtest_errors.items(),
            key=lambda item: (item[1] is None, item[1] or 0.0),
        )
        width = max((len(name) for name, _ in ranked), default=0)
        lines += [
            f"  {name:<{width}}  {'failed' if score is None else f'{score:.3f}'}"
            for name, score in ranked
        ]
    lines += [f"note: {note}" for note in report.notes]
    return "\n".join(lines)
