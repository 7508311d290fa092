"""Scaling benchmark on shapes of load no trace holds: level shifts, batches, gaps, tiny loads.

The public traces are four kinds of load; the project is also judged on load it has never
seen. These are made-up series, each a shape real workloads have and the traces lack (a batch
switching on and off, a step in level, load that is zero at night, a few requests a minute,
heavy-tailed noise, gaps in the metric, a cron job every hour, growth), three days at
1-minute steps from a fixed seed. Each is replayed as ``benchmarks.scaling`` replays the
traces (the operator's defaults, start-up one step, capacity p99.9 / 20, the budget at the
HPA's overload share), to show where the policy is cheaper than the HPA at its overload and
where it is not. The markdown report goes to stdout and into BENCHMARKS.md between this
benchmark's markers.

    .venv/bin/python -m benchmarks.scaling_shapes [--output FILE] [--workers N]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from benchmarks.report import machine_description, table, write_section
from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.simulation import BacktestSettings, run_backtest
from predictive_scaler.simulation.backtest import MATCH_HPA

SECTION = "scaling-shapes"
STEP_SECONDS = 60.0
DAY = 1440
STEPS = 3 * DAY
SEED = 7

Shape = Callable[[np.random.Generator], FloatArray]
_t = np.arange(STEPS, dtype=np.float64)
_daily = np.sin(2 * np.pi * _t / DAY)


def _noise(rng: np.random.Generator, sd: float) -> FloatArray:
    return np.asarray(rng.normal(0.0, sd, STEPS), dtype=np.float64)


def _rare_spikes(rng: np.random.Generator) -> FloatArray:
    load = 10 + _noise(rng, 0.5)
    load[rng.choice(STEPS, STEPS // 500, replace=False)] *= 5
    return load


def _gaps(rng: np.random.Generator) -> FloatArray:
    load = 10 + _noise(rng, 0.5)
    load[rng.random(STEPS) < 0.05] = np.nan
    for start in range(1000, STEPS, 900):
        load[start : start + 30] = np.nan
    return load


# name -> (what it is, how it is made)
SHAPES: dict[str, tuple[str, Shape]] = {
    "constant": ("10, exactly", lambda rng: np.full(STEPS, 10.0)),
    "constant, noisy": ("10, noise sd 0.5", lambda rng: 10 + _noise(rng, 0.5)),
    "rare spikes": ("10, noise sd 0.5; one step in 500 five times higher", _rare_spikes),
    "level step": (
        "5, then 15 from half-way, noise sd 0.3",
        lambda rng: np.where(_t < STEPS / 2, 5.0, 15.0) + _noise(rng, 0.3),
    ),
    "on and off": (
        "1 and 12 in turn, 6 h each, noise sd 0.2",
        lambda rng: np.where((_t // 360) % 2 == 0, 1.0, 12.0) + _noise(rng, 0.2),
    ),
    "hourly batch": (
        "4, and 16 for the first 10 minutes of each hour, noise sd 0.3",
        lambda rng: 4 + np.where(_t % 60 < 10, 12.0, 0.0) + _noise(rng, 0.3),
    ),
    "ramp": (
        "2 up to 20 and back over the three days, noise sd 0.3",
        lambda rng: 2 + 18 * (1 - np.abs(_t / STEPS * 2 - 1)) + _noise(rng, 0.3),
    ),
    "daily sine": (
        "10 +- 8 over the day, noise sd 0.8",
        lambda rng: 10 + 8 * _daily + _noise(rng, 0.8),
    ),
    "zero at night": (
        "the day's sine above 0 (x 10, noise sd 0.5), 0 at night",
        lambda rng: np.where(_daily > 0, np.clip(10 * _daily + _noise(rng, 0.5), 0, None), 0.0),
    ),
    "few requests": ("Poisson, mean 0.5 a step", lambda rng: rng.poisson(0.5, STEPS).astype(float)),
    "heavy tail": ("5 + Pareto(2.5) noise", lambda rng: 5 + rng.pareto(2.5, STEPS)),
    "gaps": ("10, noise sd 0.5; 5 % of samples and 30 min every 15 h missing", _gaps),
    "growth": (
        "2 growing tenfold over the three days, noise sd 0.1",
        lambda rng: 2 * np.exp(_t / STEPS * np.log(10)) + _noise(rng, 0.1),
    ),
    "random walk": (
        "20 plus a random walk of steps sd 0.3, its absolute value",
        lambda rng: np.abs(20 + np.cumsum(_noise(rng, 0.3))),
    ),
    "huge unit": (
        "the daily sine x 10^6",
        lambda rng: 1e6 * (10 + 8 * _daily + _noise(rng, 0.8)),
    ),
}


def shape_load(name: str) -> FloatArray:
    """The shape's series: the same every run (its own generator, seeded); a load is never
    below 0, so noise that would take it there is cut at 0."""
    return np.clip(SHAPES[name][1](np.random.default_rng(SEED)), 0.0, None)


def replay_shape(name: str) -> tuple[list[str], float]:
    """One shape replayed: its table row, and the seconds it took."""
    started = time.perf_counter()
    result = run_backtest(
        shape_load(name), STEP_SECONDS, BacktestSettings(overload_budget=MATCH_HPA)
    )
    predictive, hpa = result.policies["predictive"].outcome, result.policies["hpa"].outcome
    oracle = result.policies["oracle_at_full_utilisation"].outcome
    scored = result.scored_minutes
    fewer = 1.0 - predictive.replica_minutes / hpa.replica_minutes
    row = [
        name,
        SHAPES[name][0],
        f"{hpa.overload_minutes:.0f} ({hpa.overload_minutes / scored:.2%})",
        f"{hpa.replica_minutes:.0f}",
        f"{predictive.overload_minutes:.0f} ({predictive.overload_minutes / scored:.2%})",
        f"{result.beyond_ceiling_minutes:.0f}",
        f"{predictive.replica_minutes:.0f}",
        f"{fewer:.1%}",
        f"{predictive.replica_minutes / oracle.replica_minutes:.2f}",
        f"{predictive.scaling_actions} / {hpa.scaling_actions}",
    ]
    return row, time.perf_counter() - started


HEADER = [
    "shape",
    "the load",
    "hpa overload min (share)",
    "hpa replica-min",
    "predictive overload min (share)",
    "of which beyond the threshold's ceiling (min)",
    "predictive replica-min",
    "fewer replica-min than hpa",
    "predictive / oracle@100%",
    "scale actions, predictive / hpa",
]


def render(rows: Sequence[list[str]], seconds: float) -> str:
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return "\n".join(
        [
            "## Scaling on shapes no trace holds",
            "",
            f"Measured {when} on {machine_description()}; {seconds / 60:.0f} min.",
            "Reproduce: `.venv/bin/python -m benchmarks.scaling_shapes`.",
            "",
            "Made-up loads, each a shape real workloads have and the four traces lack, three "
            f"days at 1-minute steps (seed {SEED}; `benchmarks/scaling_shapes.py` says how each "
            "is made). Replayed as the traces are: the operator's defaults, start-up one step, "
            "capacity p99.9 / 20, the budget at the HPA's overload share (one step when it "
            "never overloads). Nothing was tuned on them; they show what the defaults do with "
            "a load they were not chosen for.",
            "",
            *table(HEADER, rows),
            "",
        ]
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--output", type=Path, default=Path("BENCHMARKS.md"))
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    rows = []
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        for done, (row, seconds) in enumerate(pool.map(replay_shape, SHAPES), 1):
            print(f"[{done}/{len(SHAPES)}] {row[0]}: {seconds:.0f} s", flush=True)
            rows.append(row)
    section = render(rows, time.perf_counter() - started)
    print(section)
    write_section(args.output, SECTION, section)


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
