"""The forecasting benchmark's yardstick: the same fit in every run, reported in the header."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from benchmarks.forecast_runs import QUICK_RUN
from benchmarks.forecasting_report import Settings, render_header
from benchmarks.forecasting_speed import (
    YARDSTICK_POINTS,
    Yardstick,
    yardstick_seconds,
    yardstick_series,
)


def test_the_yardstick_series_is_the_same_in_every_run() -> None:
    first, second = yardstick_series(), yardstick_series()

    assert first.shape == (YARDSTICK_POINTS,)
    np.testing.assert_array_equal(first, second)
    # A stationary series around its level, as a load window is: not a constant.
    assert 80.0 < first.mean() < 120.0
    assert first.std() > 1.0


def test_the_yardstick_fit_takes_measurable_cpu_time() -> None:
    assert yardstick_seconds() > 0.0


def test_the_header_reports_the_yardstick_at_start_and_end() -> None:
    settings = Settings(Path("traces"), Path("BENCHMARKS.md"), True, QUICK_RUN)

    header = "\n".join(render_header(settings, 60.0, 0.5, Yardstick(0.0312, 0.0455)))

    assert "took 31.2 ms of CPU at the start of the run and 45.5 ms at the end" in header
