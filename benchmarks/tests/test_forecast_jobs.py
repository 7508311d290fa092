"""The benchmark's contenders: how the MSTL anchor is asked to run."""

from __future__ import annotations

import math

from benchmarks.forecast_jobs import stl_jumps


def test_stl_jumps_are_a_tenth_of_each_window() -> None:
    jumps = stl_jumps(1440)
    assert jumps["seasonal_jump"] == 2
    trend = math.ceil(1.5 * 1440 / (1 - 1.5 / 11))
    assert jumps["trend_jump"] == math.ceil((trend + (trend % 2 == 0)) / 10)
    assert jumps["low_pass_jump"] == 145
