"""The replay's long history is what the operator would have read from Prometheus."""

from __future__ import annotations

import numpy as np

from predictive_scaler.simulation.forecasts import LongWindow

MINUTE = 60.0


def test_the_long_window_averages_steps_into_long_steps_and_pads_the_unseen_past() -> None:
    window = LongWindow.of(86_400.0, 300.0, MINUTE)
    assert (window.steps, window.factor) == (1440, 5)
    load = np.arange(100, dtype=np.float64)
    long = window.before(load, 100, MINUTE)
    assert long.step_seconds == 300.0
    assert long.values.size == 288
    # The last 100 minutes are 20 block means; everything before the trace is missing.
    np.testing.assert_allclose(long.values[-20:], load.reshape(20, 5).mean(axis=1))
    assert np.isnan(long.values[:-20]).all()
    # Placed at the middle of its five minutes, as the operator places a rate over them.
    assert long.end_time == 99 * MINUTE - 2 * MINUTE


def test_missing_steps_leave_a_long_sample_missing_only_when_all_its_steps_are() -> None:
    load = np.ones(10)
    load[5:9] = np.nan
    long = LongWindow.of(600.0, 300.0, MINUTE).before(load, 10, MINUTE)
    np.testing.assert_array_equal(long.values, [1.0, 1.0])
    load[5:] = np.nan
    assert np.isnan(LongWindow.of(600.0, 300.0, MINUTE).before(load, 10, MINUTE).values[-1])


def test_a_trace_coarser_than_the_long_step_is_used_as_it_is() -> None:
    window = LongWindow.of(3 * 86_400.0, 300.0, 900.0)
    assert window.factor == 1
    assert window.steps == 288
