"""Forecasting benchmark: rolling-origin accuracy on real load traces, and fit+predict speed.

Every model in the registry, plus statsforecast's AutoETS and AutoARIMA as outside anchors, is
refitted at origins spread over four public traces and scored by MASE against seasonal naive.
Timing covers one series at 300 and 1,000 points and 1,000 different series. The markdown
report goes to stdout and into BENCHMARKS.md between this benchmark's markers.

    .venv/bin/python -m benchmarks.forecasting [--quick] [--traces DIR] [--output FILE]
"""

from __future__ import annotations

import argparse
import math
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from benchmarks.forecast_runs import (
    ANCHOR_MAX_SEASON,
    ANCHORS,
    FULL_RUN,
    HORIZON,
    QUICK_RUN,
    TRACES,
    RunSize,
    anchor_season,
    load_workloads,
)
from benchmarks.forecasting_accuracy import (
    SCORED_HORIZONS,
    SELECTION_AGE_STEPS,
    AccuracyRow,
    TraceResult,
    as_floats,
    evaluate_trace,
)
from benchmarks.forecasting_speed import (
    AUTO_CACHED,
    AUTO_FRESH,
    SLOW_PER_SERIES,
    TIMING_LENGTHS,
    SpeedRow,
    speed_rows,
)
from benchmarks.report import (
    REPO_ROOT,
    REPO_TRACES,
    format_seconds,
    machine_description,
    package_versions,
    table,
    write_section,
)
from predictive_scaler.forecasting import Auto

SECTION = "forecasting"
LIBRARIES = ("numpy", "statsmodels", "scikit-learn", "statsforecast")
# "Matches" the better anchor: auto's MASE at most this much above it.
MATCH_TOLERANCE = 0.01


@dataclass(frozen=True)
class Settings:
    traces_dir: Path
    output: Path
    quick: bool
    size: RunSize


@dataclass(frozen=True)
class TargetCheck:
    target: str
    reached: bool
    evidence: str


def row_for(result: TraceResult, model: str) -> AccuracyRow:
    return next(row for row in result.rows if row.model == model)


def check_targets(results: Sequence[TraceResult], speed: Sequence[SpeedRow]) -> list[TargetCheck]:
    ratios = {r.spec.label: row_for(r, Auto.name).ratio_to_seasonal_naive for r in results}
    beats_baseline = all(value < 1.0 for values in ratios.values() for value in values)
    ratio_text = "; ".join(f"{label} {format_triple(values)}" for label, values in ratios.items())
    matches_anchors = True
    anchor_texts = []
    for result in results:
        auto = row_for(result, Auto.name).mase
        best = np.fmin(*(np.array(row_for(result, name).mase) for name in ANCHORS))
        matches_anchors &= bool(np.all(np.array(auto) <= best * (1.0 + MATCH_TOLERANCE)))
        anchor_texts.append(
            f"{result.spec.label} {format_triple(auto)} vs {format_triple(as_floats(best))}"
        )
    by_name = {row.model: row for row in speed}
    micro = {name: by_name[name].per_series for name in ("gm11", "brown")}
    micro_text = "; ".join(f"{name} {format_pair(values)}" for name, values in micro.items())
    cached = by_name[AUTO_CACHED].per_series
    return [
        TargetCheck(
            "auto's MASE ratio to seasonal naive < 1 on every trace (h = 1, 2, 5)",
            beats_baseline,
            ratio_text,
        ),
        TargetCheck(
            f"auto's MASE matches (within {MATCH_TOLERANCE:.0%}) or beats the better "
            "statsforecast anchor on every trace and horizon",
            matches_anchors,
            "auto vs better anchor, h = 1/2/5: " + "; ".join(anchor_texts),
        ),
        TargetCheck(
            "gm11 and brown fit+predict in tens of microseconds (< 100 µs at 300 and 1,000 points)",
            all(value < 1e-4 for values in micro.values() for value in values),
            micro_text,
        ),
        TargetCheck(
            "auto with a cached selection under 100 ms per workload (300 and 1,000 points)",
            all(value < 0.1 for value in cached),
            format_pair(cached),
        ),
    ]


def format_pair(values: Sequence[float]) -> str:
    lengths = ", ".join(
        f"{format_seconds(value)} at {length}"
        for value, length in zip(values, TIMING_LENGTHS, strict=True)
    )
    return lengths + " points"


def format_triple(values: Sequence[float]) -> str:
    return " / ".join("n/a" if math.isnan(value) else f"{value:.3f}" for value in values)


def render_setup(results: Sequence[TraceResult]) -> list[str]:
    rows = []
    for result in results:
        spec = result.spec
        season = "none" if spec.season is None else str(spec.season)
        per_vm = f" ({result.workloads} VMs)" if spec.vm_column else ""
        rows.append(
            [
                f"{spec.label}{per_vm}",
                f"`{spec.file}` `{spec.column}`",
                f"{result.step_seconds:g} s",
                f"{result.points:,}",
                season,
                str(anchor_season(spec.season)),
                str(spec.history),
                str(result.origins),
            ]
        )
    header = ["trace", "file, column", "step", "points", "season", "anchors' season"]
    return table([*header, "history", "origins"], rows)


def render_accuracy(result: TraceResult) -> list[str]:
    heads = "/".join(str(h) for h in SCORED_HORIZONS)
    header = [
        "model",
        f"MASE h={heads}",
        f"ratio to seasonal naive h={heads}",
        f"under-forecast share h={heads}",
        "scored",
        "fallbacks or failures",
    ]
    rows = []
    for row in result.rows:
        problem = f"{row.problems}: {row.first_problem[:80]}" if row.problems else "0"
        rows.append(
            [
                f"**{row.model}**" if row.model == Auto.name else row.model,
                format_triple(row.mase),
                format_triple(row.ratio_to_seasonal_naive),
                format_triple(row.under_share),
                f"{row.scored}/{result.origins}",
                problem.replace("|", "/"),
            ]
        )
    choices = ", ".join(f"{name} {count}" for name, count in result.auto_choices)
    return [f"#### {result.spec.label}", "", *table(header, rows), "", f"auto chose: {choices}."]


def render_speed(rows: Sequence[SpeedRow], series_count: int) -> list[str]:
    header = [
        "model",
        *(f"one series, {length} points" for length in TIMING_LENGTHS),
        f"{series_count:,} series of {TIMING_LENGTHS[0]} points",
    ]
    body = [
        [
            row.model,
            *(format_seconds(value) for value in row.per_series),
            f"{format_seconds(row.many_series_seconds)} ({row.many_series_note})",
        ]
        for row in rows
    ]
    return table(header, body)


def render_header(settings: Settings, elapsed: float, load_before: float) -> list[str]:
    command = ".venv/bin/python -m benchmarks.forecasting" + (" --quick" if settings.quick else "")
    quick_note = " (**quick run**: fewer origins, VMs and series)" if settings.quick else ""
    return [
        "## Forecasting: accuracy on real traces and fit+predict speed",
        "",
        f"- Date: {datetime.now(UTC):%Y-%m-%d}; the run took {elapsed / 60:.1f} min{quick_note}",
        f"- Machine: {machine_description()}; BLAS/OpenMP limited to one thread, as the library "
        f"runs its models; load average {load_before:.2f} before the run, "
        f"{os.getloadavg()[0]:.2f} after",
        f"- Reproduce: `{command}` (traces from `traces/`)",
        f"- Libraries: {package_versions(LIBRARIES)}",
    ]


METHOD = (
    f"Rolling origin: at each origin every model is fitted on the previous `history` points and "
    f"forecasts {HORIZON} steps; horizon h is scored on steps 1..h. MASE divides the mean "
    "absolute error by the training window's in-sample seasonal-naive one-step MAE "
    "(`metrics.naive_scale`, which uses lag 1 when the window is shorter than a season: with "
    "1,000 points NASA and Alibaba see less than a day, so there seasonal_naive is naive and "
    "the scale is the one-step naive error). The ratio is a model's mean MASE over "
    "seasonal_naive's on the same origins (< 1 beats seasonal naive). `auto` refits at each "
    f"origin with a selection (`select_model`) made {SELECTION_AGE_STEPS} steps earlier on the "
    "history then, as the operator refits between scheduled refreshes of its selection. "
    "NASA's outage (zeros for an hour or "
    "more) is marked missing and filled by `clean_series`; origins whose history or horizon "
    "touch it are skipped. A Google VM holds 24 h, so no daily season, and its autocorrelation "
    "shows no hourly one: Google runs without a season (seasonal_naive is naive there). "
    f"statsforecast's ETS takes no season above {ANCHOR_MAX_SEASON}, so both anchors get season "
    "1 when the trace's season is longer; their forecasts are clipped at 0 as the library's "
    "are. The last column counts fits that fell back to the naive forecast or raised."
)


def render_speed_intro(series_count: int, sample: int) -> str:
    return (
        f"Median wall time of make_model + fit + predict({HORIZON}) on one series (a NASA "
        f"slice, season {TRACES[0].season}) over repeats after a warm-up, and the total time for "
        f"{series_count:,} different {TIMING_LENGTHS[0]}-point windows of NASA, Alibaba and "
        "Azure (a Google VM has only 288 points) run one after the other. Models slower than "
        f"{SLOW_PER_SERIES * 1e3:.0f} ms per series, and auto (each series needs its own "
        f"selection), are timed on {sample} of the windows and scaled up. `{AUTO_FRESH}` "
        f"includes `select_model`; `{AUTO_CACHED}` refits with a selection made earlier on the "
        "same series."
    )


def render_report(
    settings: Settings,
    *,
    results: Sequence[TraceResult],
    speed: Sequence[SpeedRow],
    series_count: int,
    checks: Sequence[TargetCheck],
    elapsed: float,
    load_before: float,
) -> str:
    check_rows = [
        [check.target, "reached" if check.reached else "**not reached**", check.evidence]
        for check in checks
    ]
    lines = [
        *render_header(settings, elapsed, load_before),
        "",
        "### Method",
        "",
        METHOD,
        "",
        *render_setup(results),
        "",
        "### Targets",
        "",
        *table(["target", "result", "figures"], check_rows),
        "",
        "### Accuracy",
        "",
    ]
    for result in results:
        lines += [*render_accuracy(result), ""]
    lines += [
        "### Speed",
        "",
        render_speed_intro(series_count, settings.size.slow_series_sample),
        "",
        *render_speed(speed, series_count),
    ]
    return "\n".join(lines) + "\n"


def parse_settings(argv: Sequence[str] | None) -> Settings:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.forecasting",
        description=__doc__.splitlines()[0] if __doc__ else None,
    )
    parser.add_argument("--quick", action="store_true", help="few origins: a smoke run")
    parser.add_argument(
        "--traces", type=Path, default=REPO_TRACES, metavar="DIR", help="trace directory"
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=REPO_ROOT / "BENCHMARKS.md",
        metavar="FILE",
        help=f"markdown file whose {SECTION} section is replaced (default: BENCHMARKS.md)",
    )
    args = parser.parse_args(argv)
    return Settings(args.traces, args.output, args.quick, QUICK_RUN if args.quick else FULL_RUN)


def main(argv: Sequence[str] | None = None) -> None:
    settings = parse_settings(argv)
    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    # The library limits BLAS to one thread inside its models; the anchors get the same, and
    # spinning BLAS threads on a small machine would swamp the timings.
    with threadpool_limits(limits=1):
        loaded = [
            (spec, load_workloads(spec, settings.traces_dir, settings.size)) for spec in TRACES
        ]
        results = [evaluate_trace(spec, workloads, settings.size) for spec, workloads in loaded]
        speed, series_count = speed_rows(settings.size, loaded)
    checks = check_targets(results, speed)
    elapsed = time.perf_counter() - started
    report = render_report(
        settings,
        results=results,
        speed=speed,
        series_count=series_count,
        checks=checks,
        elapsed=elapsed,
        load_before=load_before,
    )
    print(report)
    write_section(settings.output, SECTION, report)


if __name__ == "__main__":
    main()
