"""The SPEC RG elasticity metrics (Herbst et al. 2018) on supply curves worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from predictive_scaler.simulation.elasticity import Elasticity, demand, elasticity

pytestmark = pytest.mark.unit


def seconds(n: int, each: float = 60.0) -> np.ndarray:
    return np.full(n, each)


def test_supply_that_follows_demand_exactly_scores_zero_everywhere() -> None:
    need = np.array([1.0, 3.0, 2.0, 2.0])
    scored = elasticity(need, need.astype(np.int64), seconds(4))
    assert scored.metrics() == dict.fromkeys(scored.metrics(), 0.0)


def test_under_and_over_provisioning_are_shares_of_demand_over_time() -> None:
    need = np.array([4.0, 4.0, 2.0, 2.0])
    have = np.array([2, 4, 4, 2])
    scored = elasticity(need, have, seconds(4))
    # Short by 2 of 4 in one step of four; over by 2 of 2 in another.
    assert scored.under_accuracy == pytest.approx(100 * 0.5 / 4)
    assert scored.over_accuracy == pytest.approx(100 * 1.0 / 4)
    assert scored.under_timeshare == pytest.approx(25.0)
    assert scored.over_timeshare == pytest.approx(25.0)
    # Transitions: supply +2 / demand 0, supply 0 / demand -2, supply -2 / demand 0: all apart.
    assert scored.instability == pytest.approx(100.0)


def test_steps_are_weighted_by_their_duration_and_idle_demand_counts_per_replica() -> None:
    need = np.array([0.0, 2.0])
    have = np.array([1, 2])
    scored = elasticity(need, have, np.array([30.0, 90.0]))
    # One spare replica while nothing was needed: a share of 1 (e = one replica) for 30 of 120 s.
    assert scored.over_accuracy == pytest.approx(100 * 30 / 120)
    assert scored.over_timeshare == pytest.approx(25.0)
    # Supply and demand both rose: stable.
    assert scored.instability == 0.0


def test_missing_samples_are_left_out_and_sums_add_up() -> None:
    need = demand(np.array([10.0, math.nan, 35.0]), capacity=10.0)
    np.testing.assert_array_equal(need, [1.0, np.nan, 4.0])
    first = elasticity(need, np.array([1, 9, 2]), seconds(3))
    assert first.seconds == 120.0
    assert first.under_accuracy == pytest.approx(100 * (2 / 4 * 60) / 120)
    both = sum([first, first])
    assert isinstance(both, Elasticity)
    assert both.seconds == 240.0
    assert both.metrics() == pytest.approx(first.metrics())


def test_demand_forgives_the_sizing_rounding_sliver() -> None:
    np.testing.assert_array_equal(demand(np.array([20.0000000001, 0.0]), 10.0), [2.0, 0.0])
