"""The demo's PNG: load against serving capacity and replicas: operator, real HPA, replay."""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from predictive_scaler.simulation import ReplayResult
from predictive_scaler_dev.demo.load import Tick
from predictive_scaler_dev.demo.scenario import TRACE_LABEL, Scenario
from predictive_scaler_dev.demo.summary import DemoSummary

ForecastSample = tuple[float, float, float]  # seconds into the replay, lower, upper


def can_plot() -> bool:
    return importlib.util.find_spec("matplotlib") is not None


def plot_demo(
    path: Path,
    scenario: Scenario,
    *,
    ticks: Sequence[Tick],
    hpa_ticks: Sequence[Tick],
    keda_ticks: Sequence[Tick],
    forecasts: Sequence[ForecastSample],
    reactive: ReplayResult,
    summary: DemoSummary,
) -> None:
    import matplotlib  # noqa: PLC0415 - optional extra

    matplotlib.use("Agg")  # files only, no display needed
    import matplotlib.pyplot as plt  # noqa: PLC0415
    from matplotlib.ticker import MaxNLocator  # noqa: PLC0415

    def hours(seconds: np.ndarray) -> np.ndarray:
        """Trace hours of the day; the warm-up comes before the start hour."""
        since_start = seconds - scenario.warmup_seconds
        return scenario.start_hour + since_start * scenario.compression / 3600.0

    tick_hours = hours(np.array([t.seconds for t in ticks]))
    # Each scaler measured in the cluster: its ticks, colour, and names in the two panels.
    measured = (
        (ticks, "tab:blue", "predictive-scaler: serving capacity (running pods)", "predictive"),
        (hpa_ticks, "tab:orange", "HPA controller (measured): serving capacity", "HPA controller"),
        (keda_ticks, "tab:green", "KEDA, Prometheus scaler (measured): serving capacity", "KEDA"),
    )
    step_hours = scenario.start_hour + np.arange(reactive.replicas.size) * (
        scenario.step_minutes / 60.0
    )
    capacity = scenario.capacity_cores
    figure, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(12, 7), height_ratios=[2, 1])
    warmup_start = float(hours(np.array([0.0]))[0])
    for axes in (top, bottom):
        axes.axvspan(warmup_start, scenario.start_hour, color="0.92", zorder=0)
    top.text(warmup_start + 0.1, 0.2, "warm-up, not scored", fontsize="small", color="0.4")
    if forecasts:
        band = np.array(forecasts)
        top.fill_between(
            hours(band[:, 0]),
            band[:, 1],
            band[:, 2],
            color="tab:blue",
            alpha=0.15,
            label="forecast interval the operator sized for",
        )
    top.step(tick_hours, [t.load for t in ticks], where="post", color="black", label="load")
    for series, color, capacity_label, replicas_label in measured:
        at = hours(np.array([t.seconds for t in series]))
        top.step(
            at,
            [t.running * capacity for t in series],
            where="post",
            color=color,
            label=capacity_label,
        )
        bottom.step(
            at, [t.replicas for t in series], where="post", color=color, label=replicas_label
        )
    top.step(
        step_hours,
        reactive.ready * capacity,
        where="post",
        color="tab:red",
        linestyle="--",
        label="reactive HPA (replayed): serving capacity",
    )
    top.set_ylabel("CPU cores")
    top.set_title(
        f"{TRACE_LABEL}, {scenario.step_minutes}-minute steps replayed every "
        f"{scenario.seconds_per_step:g} s; pods start in {scenario.startup_steps} step"
    )
    top.legend(loc="upper left", fontsize="small")
    bottom.step(
        step_hours,
        reactive.replicas,
        where="post",
        color="tab:red",
        linestyle="--",
        label="reactive HPA (replayed)",
    )
    bottom.set_ylabel("replicas")
    bottom.yaxis.set_major_locator(MaxNLocator(integer=True))
    bottom.set_xlabel("hour of the day (trace time; the warm-up is the evening before)")
    scored = (
        ("predictive", summary.operator),
        ("HPA controller", summary.hpa),
        ("KEDA", summary.keda),
        ("replayed", summary.baseline),
    )
    # Room above the highest count for the legend, one row wide: in the
    # corner it hid the replicas of the morning ramp.
    low, high = bottom.get_ylim()
    bottom.set_ylim(low, high + 0.45 * (high - low))
    bottom.legend(
        loc="upper center",
        ncol=4,
        fontsize="small",
        title="overload min / replica-min: "
        + "; ".join(
            f"{name} {outcome.overload_minutes:.0f} / {outcome.replica_minutes:,.0f}"
            for name, outcome in scored
        ),
        title_fontsize="small",
    )
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
