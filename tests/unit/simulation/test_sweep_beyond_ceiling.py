"""Each budget sweep point counts its own overloads beyond the threshold's ceiling."""

from __future__ import annotations

import numpy as np
import pytest

from predictive_scaler.simulation import BacktestResult, BacktestSettings, run_backtest

STEP = 60.0
HISTORY = 120  # steps
BUDGETS = (0.001, 0.01, 0.2)
CHOSEN = 0.01


def jumpy_load() -> np.ndarray:
    """A calm load with a jump to three times its level every 50 steps: no forecast of
    the calm steps sees a jump coming, so its overloads lie beyond any threshold."""
    rng = np.random.default_rng(7)
    load = 100.0 + rng.normal(0.0, 2.0, 600)
    load[HISTORY + 25 :: 50] *= 3.0
    return load


@pytest.fixture(scope="module")
def result() -> BacktestResult:
    settings = BacktestSettings(
        startup_steps=1,
        model="naive",
        history_seconds=HISTORY * STEP,
        overload_budget=CHOSEN,
        budget_sweep=BUDGETS,
        baseline_sweep=(0.7,),
    )
    return run_backtest(jumpy_load(), STEP, settings)


def test_the_sweep_point_at_the_chosen_budget_counts_what_the_chosen_policy_counts(
    result: BacktestResult,
) -> None:
    assert len(result.sweep_beyond_ceiling) == len(BUDGETS)
    at_chosen = result.sweep_beyond_ceiling[BUDGETS.index(CHOSEN)]
    assert result.beyond_ceiling is not None
    assert result.beyond_ceiling > 0
    assert at_chosen == result.beyond_ceiling


def test_beyond_the_ceiling_is_a_part_of_each_points_overload(result: BacktestResult) -> None:
    for point, minutes in zip(
        result.predictive_sweep, result.sweep_beyond_ceiling_minutes, strict=True
    ):
        assert 0.0 < minutes <= point.outcome.overload_minutes
    # The jumps are beyond every threshold: a larger budget cannot add any of them.
    assert len(set(result.sweep_beyond_ceiling)) == 1


def test_without_a_budget_the_sweep_counts_nothing() -> None:
    settings = BacktestSettings(
        startup_steps=1,
        model="naive",
        history_seconds=HISTORY * STEP,
        predictive_sweep=(0.7,),
        baseline_sweep=(0.7,),
    )
    unbudgeted = run_backtest(jumpy_load(), STEP, settings)
    assert unbudgeted.sweep_beyond_ceiling == ()
    assert unbudgeted.sweep_beyond_ceiling_minutes == ()
