"""Scaling benchmark: predictive vs the reactive HPA vs the oracle, replayed on real traces.

Each trace is forecast at every step (the operator's ScheduledSelection, ``auto``, hourly
refresh, 6 h recent and 15 d long history) and replayed for pod start-up times of 1, 2 and 5
minutes through design.md section 5's model; for each start-up it is forecast over the horizon
the operator would ask for, the start-up plus one decision step. The predictive policy sizes
replicas from the capacity per replica within an overload budget (``scaling.decide``, the
operator's defaults otherwise), out of the box with the budget at the HPA's realised overload
share, and swept over budgets for the matched comparison. Google's per-VM trace is replayed
per VM and the figures summed, as for a fleet of small workloads. The markdown report goes to
stdout and into BENCHMARKS.md between this benchmark's markers.

    .venv/bin/python -m benchmarks.scaling [--quick] [--traces DIR] [--output FILE] [--workers N]
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from benchmarks.report import machine_description, package_versions, table, write_section
from benchmarks.scaling_replay import (
    Row,
    Workload,
    parse_replay_arguments,
    replay_all,
    replay_arguments,
)
from benchmarks.scaling_rows import (
    BUDGET_FACTOR,
    box_header,
    elasticity_rows,
    matched_header,
    matched_row,
    out_of_the_box_row,
    sizing_header,
    sizing_row,
    variants_row,
)
from predictive_scaler.scaling.behavior import PREDICTIVE_SCALE_DOWN_WINDOW_SECONDS
from predictive_scaler.scaling.budget import HIGHEST
from predictive_scaler.simulation.cadence import VARIANTS
from predictive_scaler.simulation.forecasts import CLAIRVOYANT_STEPS
from predictive_scaler.simulation.hindsight import DAY_NEIGHBOURS, MAX_LAGS
from predictive_scaler.traces import column_values


def workloads(traces: Path, quick: bool) -> list[Workload]:
    """The slices replayed: whole days from each trace's start, the first VMs of Google's."""
    nasa_days, alibaba_days, azure_days, google_vms = (1, 1, 3, 2) if quick else (7, 4, 14, 20)
    chosen = [
        Workload(
            "NASA HTTP 1995",
            "nasa_http_1995_per_minute.csv.gz",
            "requests_per_minute",
            nasa_days * 1440,
        ),
        Workload(
            "Alibaba 2018 CPU",
            "alibaba_2018_cluster_usage_30s.csv.gz",
            "cpu_util_percent",
            alibaba_days * 2880,
        ),
        Workload(
            "Azure 2019 CPU", "azure_2019_vm_usage_5min.csv.gz", "cpu_usage", azure_days * 288
        ),
    ]
    vms = column_values(traces / "google_2011_vm_usage_5min.csv.gz", "vm")[:google_vms]
    chosen += [
        Workload(
            "Google 2011 per-VM CPU",
            "google_2011_vm_usage_5min.csv.gz",
            "cpu_percent",
            288,
            (("vm", vm),),
        )
        for vm in vms
    ]
    return chosen


def render(rows: list[Row], seconds: float, quick: bool) -> str:
    elasticity_header = [
        "trace",
        "start-up",
        "policy",
        "under-provisioning accuracy %",
        "over-provisioning accuracy %",
        "under-provisioning timeshare %",
        "over-provisioning timeshare %",
        "instability %",
    ]
    variants_header = [
        "trace",
        "start-up",
        *(f"HPA, {name}: overload min / replica-min" for name in VARIANTS),
    ]
    box, matched, elastic, variants, sizing = [], [], [], [], []
    for row in rows:
        box.append(out_of_the_box_row(row))
        sizing.append(sizing_row(row))
        matched.append(matched_row(row))
        elastic += elasticity_rows(row)
        variants.append(variants_row(row))
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "## Scaling: predictive vs HPA vs oracle (replay, design.md section 5)",
        "",
        f"Measured {when}{' (quick run)' if quick else ''} on {machine_description()}; "
        f"{package_versions(['numpy', 'statsmodels', 'scikit-learn'])}; {seconds / 60:.0f} min.",
        "Reproduce: `.venv/bin/python -m benchmarks.scaling` (traces from `traces/`).",
        "",
        "Slices: NASA July 1-7 (1 min steps), Alibaba days 1-4 (30 s), Azure days 1-14 (5 min), "
        "Google's first 20 VMs in file order (24 h each, 5 min, figures summed over the VMs). "
        "Capacity per replica C = p99.9 / 20 of each series. The baseline is the HPA "
        "controller's decision at CPU U = 0.7, an HPA without `behavior` (see below). "
        "The predictive policy is `scaling.decide` "
        "with the operator's defaults (`auto`, hourly re-selection, 6 h recent and 15 d long "
        "history, no `behavior`, so a "
        f"{PREDICTIVE_SCALE_DOWN_WINDOW_SECONDS} s scale-down window) and "
        "`capacityPerReplica: C`, forecasting over the operator's horizon for each start-up "
        "(the start-up plus one decision step; its model selection backtests over it). "
        "Start-up is 1, 2 and 5 minutes in whole steps, so on 5-minute "
        "traces all three are one step. Overload share: overloaded minutes over scored minutes. "
        "Saving captured: (hpa - predictive) / (hpa - oracle at 100 %), the share of the "
        "possible saving.",
        "",
        "*What limits the targets.* Two references replay the same `scaling.decide`, with the "
        "same budgets, on forecasts the operator cannot make. The hindsight forecast is a "
        "forecaster of the load's own past that has learnt this very slice "
        "(`simulation/hindsight.py`): each step ahead is least squares of the last hour of "
        f"samples the decision sees (at most {MAX_LAGS}), and for the decisions with a whole "
        "day behind them a second fit that also reads the "
        f"{2 * DAY_NEIGHBOURS + 1} steps around the same time a day earlier, both fitted on "
        "the whole slice, so that they have seen every step they forecast. On the rows they "
        "were fitted on, no linear rule of those inputs with fixed coefficients forecasts "
        "with a smaller squared error. It is a reference, not a bound: the cost also depends "
        "on the "
        "band and the budget's threshold, and a model refitted as it goes, or reading more "
        "than an hour, can do better. Where it falls well short of a target, the gap is one "
        "that forecasting the load from its recent history has not closed even with "
        "hindsight. The clairvoyant forecast reads the future: its "
        f"forecast of every step ahead is the load's mean over the {CLAIRVOYANT_STEPS} "
        "steps centred on it, so it knows where the load goes (and two steps past it) and "
        "misses only the step-to-step noise around that course. Where even it falls short, "
        "no forecaster reaches that target with this policy. The hindsight band comes from "
        "its own last forecasts' errors by the operator's conformal rule, the clairvoyant's "
        "from the noise of its recent steps. The other limit is load no "
        "forecast saw coming: an overloaded step counts as beyond the threshold's ceiling "
        "when its load exceeded even what the budget's highest threshold "
        f"({HIGHEST:g} forecast spreads above the forecast, `scaling/budget.py`) would have "
        "provisioned, in whole replicas, at the decision that sized it (as `scaling.decide` "
        "counts them, in the operator's status too). No budget buys those off; only standing "
        "headroom, the HPA's, serves them.",
        "",
        "### Out of the box: `overloadBudget` at the HPA's realised overload share",
        "",
        "(One scored step when the HPA never overloads; Google's VMs share one budget, the "
        "fleet's share, as a user sets one budget for a fleet.)",
        "",
        *table(box_header(), box),
        "",
        "### Where the replicas go",
        "",
        "Out of the box as above, the mean over scored steps in replicas of C (Google: per VM), "
        "split along `scaling.decide`'s own steps (`simulation/sizing.py`): the forecast mean "
        "for the step new pods serve first; the load the decision sized for (that step's load "
        "at the budget's threshold, the forecast's spread times the threshold above the "
        "mean; on a scale-down, the highest such load within the horizon); that load in whole "
        "replicas; and what the decision asked for once the reactive floor, the "
        f"{PREDICTIVE_SCALE_DOWN_WINDOW_SECONDS} s scale-down window and the HPA's default "
        "scale-up limits had their say. Then the replicas each policy held in the replay "
        "(starting pods included). The gap from the forecast to what was sized for is mostly "
        "the price of the forecast's errors at the budget; the clairvoyant's shows how much "
        "of it a forecast that knew the load's course would save.",
        "",
        *table(sizing_header(), sizing),
        "",
        "### Matched, and budgets kept",
        "",
        "Matched figures interpolate the predictive policy's Pareto frontier over budgets "
        "0.02 % to 20 % at hpa's overload minutes and at hpa's replica-minutes. Budget kept: "
        f"the realised overload share over the budget, target within a factor of {BUDGET_FACTOR}; "
        "in brackets, the share of it beyond the threshold's ceiling (load above what the highest "
        "threshold would have provisioned, which no threshold buys off: where it nears the budget "
        "by itself, no quantile keeps the budget).",
        "",
        *table(matched_header(), matched),
        "",
        "### The HPA baseline: its normaliser and its cadence",
        "",
        "The baseline above is the controller's own decision (`simulation/hpa.py`, checked "
        "against 127 cases of its unit tests): an HPA with no `behavior`, as `kubectl "
        "autoscale` and most manifests make, takes the legacy path (the highest "
        "recommendation of 300 s, then at most max(2 x current, 4)), deciding once per trace "
        "step on the step's mean. Beside it: the default `behavior` (HPA's defaults stated), "
        "and both deciding every 15 s as the controller does, each step's mean held over its "
        "sub-steps (`simulation/cadence.py`). In brackets, replica-minutes against the first "
        "column.",
        "",
        *table(variants_header, variants),
        "",
        "### Elasticity metrics (SPEC Research Group)",
        "",
        "Herbst et al., *Quantifying Cloud Performance and Dependability*, ACM TOMPECS 3(4), "
        "2018: accuracy is the mean shortfall (under) or excess (over) of supply against "
        "demand as a share of demand, timeshare the share of time under- or over-provisioned, "
        "instability the share of time supply and demand do not move in the same direction. "
        "Demand: the replicas a step's load needs at 100 % of their capacity; supply: ready "
        "replicas (`simulation/elasticity.py`). Lower is better everywhere; the oracle, sized "
        "at U = 0.7 for the peak of its start-up window, shows the floor a policy with that "
        "headroom meets. Predictive as out of the box above.",
        "",
        *table(elasticity_header, elastic),
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = replay_arguments(__doc__)
    parser.add_argument("--quick", action="store_true", help="short slices, for a smoke run")
    args = parse_replay_arguments(parser, argv)
    started = time.perf_counter()
    rows = replay_all(args.traces, workloads(args.traces, args.quick), args.workers)
    section = render(rows, time.perf_counter() - started, args.quick)
    print(section)
    write_section(args.output, "scaling", section)


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
