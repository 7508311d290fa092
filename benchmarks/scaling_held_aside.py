"""Scaling benchmark on series nothing in the project was tuned on: the policy out of the box.

Every default of the forecasting and the scaling was chosen on ``benchmarks/scaling``'s four
slices. The same public files hold other series: later weeks of NASA's requests, a column of
Alibaba's that no benchmark reads, and Google VMs past the first 20. Replayed exactly as
``benchmarks.scaling`` replays its slices (the operator's defaults, the budget at the HPA's
overload share), they show whether the savings hold on load the defaults never saw, as the
traces kept aside from this project will. The markdown report goes to stdout and into
BENCHMARKS.md between this benchmark's markers.

    .venv/bin/python -m benchmarks.scaling_held_aside [--traces DIR] [--output FILE] [--workers N]
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from benchmarks.report import machine_description, table, write_section
from benchmarks.scaling_replay import (
    Row,
    Workload,
    parse_replay_arguments,
    replay_all,
    replay_arguments,
)
from benchmarks.scaling_rows import (
    box_header,
    matched_header,
    matched_row,
    out_of_the_box_row,
    sizing_header,
    sizing_row,
)
from predictive_scaler.traces import column_values

SECTION = "scaling-held-aside"
NASA_DAY = 1440
ALIBABA_DAY = 2880
# The scaling benchmark replays the first 20 VMs; these are the next 40.
GOOGLE_VMS = slice(20, 60)


def held_aside(traces: Path) -> list[Workload]:
    """A week of NASA five weeks on, Alibaba's disk I/O, 40 more Google VMs' CPU."""
    google = "google_2011_vm_usage_5min.csv.gz"
    return [
        Workload(
            "NASA HTTP 1995, days 35-41",
            "nasa_http_1995_per_minute.csv.gz",
            "requests_per_minute",
            7 * NASA_DAY,
            first=34 * NASA_DAY,
        ),
        Workload(
            "Alibaba 2018 disk I/O",
            "alibaba_2018_cluster_usage_30s.csv.gz",
            "disk_io_percent",
            4 * ALIBABA_DAY,
        ),
        *(
            Workload("Google 2011 per-VM CPU, VMs 21-60", google, "cpu_percent", 288, (("vm", vm),))
            for vm in column_values(traces / google, "vm")[GOOGLE_VMS]
        ),
    ]


def render(rows: Sequence[Row], seconds: float) -> str:
    box, matched, sizing = [], [], []
    for row in rows:
        box.append(out_of_the_box_row(row))
        matched.append(matched_row(row))
        sizing.append(sizing_row(row))
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return "\n".join(
        [
            "## Scaling on series nothing was tuned on",
            "",
            f"Measured {when} on {machine_description()}; {seconds / 60:.0f} min.",
            "Reproduce: `.venv/bin/python -m benchmarks.scaling_held_aside`.",
            "",
            "Every default was chosen on the four slices above. These series come from the "
            "same public files, and no other benchmark or test reads them: NASA's requests "
            "five weeks on (days 35-41 of the file, after its outage), Alibaba's whole-cluster "
            "disk I/O over the same four days as its CPU (spikier: 2.4 % of its points are "
            "1.5 times the median of the 10 minutes around them, against 0.06 % of the CPU's), "
            "and the CPU of Google's next 40 VMs (a fleet with one budget; 100 VMs were read "
            "once to check a forecasting result, nothing was tuned on them). Replayed as "
            "above: the operator's defaults, capacity p99.9 / 20, the budget at the HPA's "
            "overload share.",
            "",
            *table(box_header(), box),
            "",
            *table(matched_header(), matched),
            "",
            "Where the replicas go, as in the table of that name above:",
            "",
            *table(sizing_header(), sizing),
            "",
        ]
    )


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_replay_arguments(replay_arguments(__doc__), argv)
    started = time.perf_counter()
    rows = replay_all(args.traces, held_aside(args.traces), args.workers)
    section = render(rows, time.perf_counter() - started)
    print(section)
    write_section(args.output, SECTION, section)


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
