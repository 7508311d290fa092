"""Forecasting benchmark: accuracy, bands and cost on real load traces, against outside anchors.

At origins spread over four public traces, every model in the registry, ``auto`` on the
operator's path (a recent window plus a long history for the seasons) and statsforecast's
AutoETS, AutoARIMA, AutoTheta and MSTL see the same histories; each is scored by MASE, its
worst origins and its 90 % band; ``auto``, the baselines and the anchors are scored again
in a new workload's first two weeks (the cold start). ``auto`` also walks forward step by
step as the operator runs it, which measures its live-calibrated band and what a selection
and an update cost.
The markdown report goes to stdout and into BENCHMARKS.md between this benchmark's markers.

    .venv/bin/python -m benchmarks.forecasting [--quick] [--traces DIR] [--output FILE]
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Sequence
from pathlib import Path

from threadpoolctl import threadpool_limits

from benchmarks.forecast_runs import FULL_RUN, QUICK_RUN, TRACES, load_workloads
from benchmarks.forecasting_accuracy import evaluate_cold_starts, evaluate_trace
from benchmarks.forecasting_coverage import evaluate_walks
from benchmarks.forecasting_field import field_rows
from benchmarks.forecasting_report import Settings, render_report
from benchmarks.forecasting_speed import Yardstick, speed_rows, yardstick_seconds
from benchmarks.forecasting_targets import check_targets, costs_of
from benchmarks.report import REPO_ROOT, REPO_TRACES, write_section

SECTION = "forecasting"


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
        yardstick_at_start = yardstick_seconds()
        loaded = [
            (spec, load_workloads(spec, settings.traces_dir, settings.size)) for spec in TRACES
        ]
        results = [evaluate_trace(spec, workloads, settings.size) for spec, workloads in loaded]
        cold_starts = evaluate_cold_starts(loaded, settings.size)
        walks = [evaluate_walks(spec, workloads, settings.size) for spec, workloads in loaded]
        speed = speed_rows(settings.size, loaded)
        yardstick = Yardstick(yardstick_at_start, yardstick_seconds())
    costs = costs_of(results, walks)
    field = field_rows(results)
    checks = check_targets(results, walks, costs, speed, field)
    elapsed = time.perf_counter() - started
    report = render_report(
        settings,
        results=results,
        cold_starts=cold_starts,
        walks=walks,
        costs=costs,
        speed=speed,
        field=field,
        checks=checks,
        elapsed=elapsed,
        load_before=load_before,
        yardstick=yardstick,
    )
    print(report)
    write_section(settings.output, SECTION, report)


if __name__ == "__main__":
    main()
