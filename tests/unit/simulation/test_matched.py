"""Matched comparison: the swept policy's Pareto frontier, interpolated at the baseline."""

from __future__ import annotations

import pytest

from predictive_scaler.simulation import Outcome, compare
from predictive_scaler.simulation.matched import cost_at_overload, frontier, overload_at_cost


def outcome(cost: float, overload: float) -> Outcome:
    return Outcome(overload_minutes=overload, replica_minutes=cost, scaling_actions=0, unserved=0.0)


# (replica-minutes, overload minutes) of a hand-made headroom sweep:
#   (90, 20) (100, 10) (120, 5) (200, 0)  the frontier
#   (110, 12)  dominated by (100, 10): dearer and overloads more
#   (150, 5)   dominated by (120, 5): dearer for the same overload
#   (250, 0)   dominated by (200, 0)
#   (100, 10)  a duplicate
SWEEP = [
    outcome(120, 5),
    outcome(110, 12),
    outcome(200, 0),
    outcome(90, 20),
    outcome(150, 5),
    outcome(100, 10),
    outcome(250, 0),
    outcome(100, 10),
]
FRONTIER = [(90.0, 20.0), (100.0, 10.0), (120.0, 5.0), (200.0, 0.0)]


def test_frontier_drops_dominated_and_duplicate_points() -> None:
    assert frontier(SWEEP) == FRONTIER
    assert frontier([]) == []


def test_same_cost_keeps_the_lower_overload() -> None:
    assert frontier([outcome(100, 8), outcome(100, 3)]) == [(100.0, 3.0)]


def test_overload_is_interpolated_at_the_baselines_cost() -> None:
    # 110 lies halfway from (100, 10) to (120, 5): 7.5 overload minutes.
    assert overload_at_cost(SWEEP, 110.0) == pytest.approx(7.5)
    # On a frontier point, its own overload.
    assert overload_at_cost(SWEEP, 120.0) == pytest.approx(5.0)
    # Beyond the dearest setting, its overload is kept (0 here).
    assert overload_at_cost(SWEEP, 400.0) == pytest.approx(0.0)
    # Below the cheapest setting there is nothing to read.
    assert overload_at_cost(SWEEP, 80.0) is None


def test_cost_is_interpolated_at_the_baselines_overload() -> None:
    # 15 lies halfway from (90, 20) to (100, 10): 95 replica-minutes.
    assert cost_at_overload(SWEEP, 15.0) == pytest.approx(95.0)
    # 2 lies at 3/5 of the way from (200, 0) to (120, 5): 200 - 0.4 * 80 = 168.
    assert cost_at_overload(SWEEP, 2.0) == pytest.approx(168.0)
    # More overload than the cheapest setting has: the cheapest setting's cost.
    assert cost_at_overload(SWEEP, 50.0) == pytest.approx(90.0)
    # Less overload than any setting reaches: nothing to read.
    assert cost_at_overload(SWEEP[:2], 1.0) is None


def test_compare_reports_both_reductions() -> None:
    matched = compare(SWEEP, outcome(110, 15))
    # At 110 replica-minutes the sweep overloads 7.5 min: 1 - 7.5 / 15 = 50 % less.
    assert matched.overload_at_baseline_cost == pytest.approx(7.5)
    assert matched.overload_reduction_at_baseline_cost == pytest.approx(0.5)
    # At 15 overload minutes the sweep costs 95: 1 - 95 / 110 = 13.6 % less.
    assert matched.cost_at_baseline_overload == pytest.approx(95.0)
    assert matched.cost_reduction_at_baseline_overload == pytest.approx(1 - 95 / 110)
    assert matched.notes == ()


def test_compare_says_why_a_figure_is_missing_when_out_of_range() -> None:
    # The baseline is cheaper than every setting and overloads less than every setting.
    sweep = [outcome(100, 10), outcome(120, 5)]
    matched = compare(sweep, outcome(80, 2))
    assert matched.overload_at_baseline_cost is None
    assert matched.overload_reduction_at_baseline_cost is None
    assert matched.cost_at_baseline_overload is None
    assert matched.cost_reduction_at_baseline_overload is None
    assert matched.notes == (
        "the sweep's cheapest setting costs more than the baseline",
        "no setting in the sweep overloads as little as the baseline",
    )


def test_a_baseline_that_never_overloads_has_no_overload_to_reduce() -> None:
    matched = compare(SWEEP, outcome(250, 0))
    # The overload at its cost still reads off the frontier (0 past (200, 0)) ...
    assert matched.overload_at_baseline_cost == pytest.approx(0.0)
    # ... but a reduction of zero overload is undefined.
    assert matched.overload_reduction_at_baseline_cost is None
    assert "the baseline never overloads, so there is no overload to reduce" in matched.notes
    # The cost at zero overload is the cheapest zero-overload setting, (200, 0), not (250, 0):
    # 1 - 200 / 250 = 20 % cheaper.
    assert matched.cost_at_baseline_overload == pytest.approx(200.0)
    assert matched.cost_reduction_at_baseline_overload == pytest.approx(0.2)


def test_a_dearer_sweep_gives_a_negative_cost_reduction() -> None:
    matched = compare(SWEEP, outcome(160, 0))
    assert matched.cost_at_baseline_overload == pytest.approx(200.0)
    assert matched.cost_reduction_at_baseline_overload == pytest.approx(1 - 200 / 160)
