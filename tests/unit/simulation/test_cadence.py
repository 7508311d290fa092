"""The HPA decision cadence: the same load on a 15 s grid, figures still in minutes."""

from __future__ import annotations

import numpy as np
import pytest

from predictive_scaler.simulation.cadence import VARIANTS, hpa_variants, upsampled
from predictive_scaler.simulation.replay import ReplayConfig

pytestmark = pytest.mark.unit

CONFIG = ReplayConfig(capacity=10.0, startup_steps=2, step_seconds=60.0, start=2)


def test_a_step_is_held_over_its_sub_steps_and_the_replay_keeps_its_time() -> None:
    load, fine = upsampled(np.array([1.0, 2.0, 3.0]), CONFIG, 15.0)
    np.testing.assert_array_equal(load, [1.0] * 4 + [2.0] * 4 + [3.0] * 4)
    assert (fine.step_seconds, fine.startup_steps, fine.start) == (15.0, 8, 8)
    # A step already as fine as the cadence is left as it is.
    same, config = upsampled(np.array([1.0]), ReplayConfig(1.0, 1, 15.0, 1), 15.0)
    assert same.tolist() == [1.0]
    assert config.step_seconds == 15.0


def test_a_faster_cadence_serves_a_jump_sooner_at_the_same_minutes_scored() -> None:
    # The load quadruples in one step; deciding once a minute the HPA sees it a step late,
    # every 15 s a quarter of a step late.
    load = np.array([50.0] * 10 + [200.0] * 20)
    outcomes = hpa_variants(load, CONFIG, 0.5)
    assert set(outcomes) == set(VARIANTS)
    per_step, every_15s = outcomes["legacy"], outcomes["legacy, every 15 s"]
    assert every_15s.overload_minutes < per_step.overload_minutes
    # The same 28 scored minutes on both grids.
    assert every_15s.elasticity.seconds == per_step.elasticity.seconds == 28 * 60
