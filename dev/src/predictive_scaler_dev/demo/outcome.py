"""How a demo run ends: the three workloads scored over one window, and what is written.

The summary table on the terminal, ``summary.json`` and the plot, from the
load drivers' ticks and the scaler's last status.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, TextIO

from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler_dev.demo.load import LoadDriver, Tick
from predictive_scaler_dev.demo.plot import ForecastSample, can_plot, plot_demo
from predictive_scaler_dev.demo.scenario import Scenario
from predictive_scaler_dev.demo.summary import DemoSummary, baseline, summarise, summary_json, table
from predictive_scaler_dev.localcluster.configs import METRICS_SERVER_RESOLUTION


@dataclass(frozen=True)
class DemoResult:
    summary: DemoSummary
    report: Path
    plot: Path | None


class Drivers(NamedTuple):
    """The load drivers of the predictive scaler's, the HPA's and KEDA's workloads."""

    scaler: LoadDriver
    hpa: LoadDriver
    keda: LoadDriver


def say(out: TextIO, text: str) -> None:
    print(f"==> {text}", file=out, flush=True)


def write_outcome(
    out: TextIO,
    scenario: Scenario,
    load: FloatArray,
    output: Path,
    *,
    drivers: Drivers,
    forecasts: list[ForecastSample],
    status: dict[str, Any],
) -> DemoResult:
    """Score the three runs over the first driver's window; the table, summary.json, the plot."""
    driver, hpa_driver, keda_driver = drivers
    ticks = list(driver.ticks)

    def on_first_clock(peer: LoadDriver) -> list[Tick]:
        """The peer's ticks on the first driver's clock: all are scored over one window."""
        offset = peer.started_at - driver.started_at
        return [dataclasses.replace(t, seconds=t.seconds + offset) for t in peer.ticks]

    hpa_ticks, keda_ticks = on_first_clock(hpa_driver), on_first_clock(keda_driver)
    seasons = (status.get("forecast") or {}).get("seasons")
    if seasons:
        say(out, f"the scaler's seasons at the end: {seasons.get('summary')}")
    comparison = status.get("comparison")
    if comparison:
        # Live, in the operator, on the demo's accelerated clock (wall minutes).
        say(out, f"the operator's own shadow HPA (status.comparison): {comparison['summary']}")
    summary = summarise(
        ticks,
        hpa_ticks,
        keda_ticks,
        load,
        scenario,
        metric_resolution_seconds=float(METRICS_SERVER_RESOLUTION.removesuffix("s")),
    )
    report = output / "summary.json"
    report.write_text(json.dumps(summary_json(summary), indent=2) + "\n")
    print(file=out)
    hours = summary.trace_minutes / 60
    say(out, f"summary over {hours:.0f} h of trace time (figures in trace minutes)")
    for line in table(summary):
        print(f"    {line}", file=out)
    plot: Path | None = None
    if can_plot():
        plot = output / "demo.png"
        plot_demo(
            plot,
            scenario,
            ticks=ticks,
            hpa_ticks=hpa_ticks,
            keda_ticks=keda_ticks,
            forecasts=forecasts,
            reactive=baseline(load, scenario),
            summary=summary,
        )
        say(out, f"plot written to {plot}")
    else:
        say(out, "no plot: matplotlib is missing (pip install 'predictive-scaler[plot]')")
    say(out, f"summary written to {report}")
    return DemoResult(summary, report, plot)
