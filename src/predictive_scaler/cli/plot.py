"""``backtest --plot``: load, ready capacity per policy and the forecast band, as a PNG."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import numpy as np

from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.simulation import BacktestResult

COLOURS = {"predictive": "tab:blue", "hpa": "tab:red", "oracle": "tab:green"}


def require_plot_target(path: str) -> None:
    """Refuse a --plot that could not be written, before a long replay instead of after it."""
    if importlib.util.find_spec("matplotlib") is None:
        raise ValueError("--plot needs matplotlib: pip install 'predictive-scaler[plot]'")
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: PLC0415

    suffix = Path(path).suffix.lstrip(".").lower()
    formats = FigureCanvasAgg.get_supported_filetypes()
    if suffix not in formats:
        raise ValueError(f"--plot {path}: want a file ending in .{' .'.join(sorted(formats))}")
    folder = Path(path).parent
    if not folder.is_dir() or not os.access(folder, os.W_OK):
        raise ValueError(f"--plot {path}: {folder} is not a folder this user can write to")


def plot_backtest(load: FloatArray, result: BacktestResult, path: str, *, title: str) -> None:
    """Top: load, each policy's ready capacity, the forecast band; bottom: replicas."""
    import matplotlib  # noqa: PLC0415 - optional extra

    matplotlib.use("Agg")  # files only, no display needed
    import matplotlib.pyplot as plt  # noqa: PLC0415

    config = result.config
    minutes = (np.arange(config.start, load.size) * config.step_seconds) / 60.0
    figure, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(14, 7), height_ratios=[2, 1])
    # The band a decision relied on: made startup steps earlier for this step.
    ahead = min(config.startup_steps, result.table.horizon - 1)
    lower = np.full(minutes.size, np.nan)
    upper = np.full(minutes.size, np.nan)
    lower[ahead:] = result.table.lower[: minutes.size - ahead, ahead]
    upper[ahead:] = result.table.upper[: minutes.size - ahead, ahead]
    top.fill_between(
        minutes,
        lower,
        upper,
        color="tab:blue",
        alpha=0.15,
        step="post",
        label=f"forecast {result.settings.interval:.0%} interval",
    )
    top.plot(minutes, load[config.start :], color="black", linewidth=0.7, label="load")
    for name, colour in COLOURS.items():
        replayed = result.policies[name]
        top.step(
            minutes,
            replayed.ready * config.capacity,
            where="post",
            color=colour,
            linewidth=0.8,
            label=f"{name} ready capacity",
        )
        bottom.step(
            minutes, replayed.replicas, where="post", color=colour, linewidth=0.8, label=name
        )
    top.set_ylabel("load per step")
    top.set_title(title)
    top.legend(loc="upper left", fontsize="small")
    bottom.set_ylabel("replicas (incl. starting)")
    bottom.set_xlabel("minutes since the trace's start")
    bottom.legend(loc="upper left", fontsize="small")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
