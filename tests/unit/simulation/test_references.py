"""``run_backtest``'s references: the chosen policy on forecasts no one can run."""

from __future__ import annotations

import numpy as np
import pytest

from predictive_scaler.simulation import BacktestSettings, backtest, run_backtest
from predictive_scaler.simulation.backtest import REFERENCES
from predictive_scaler.simulation.forecasts import CLAIRVOYANT, ForecastTable
from predictive_scaler.simulation.hindsight import HINDSIGHT, HindsightUnavailableError

pytestmark = pytest.mark.unit

STEP = 60.0
# A cycle an hour long with noise on it: the last value (naive) lags the cycle, an hour of
# samples fitted in hindsight knows it.
RNG = np.random.default_rng(17)
LOAD = 100.0 + 40.0 * np.sin(2 * np.pi * np.arange(1500) / 60.0) + RNG.normal(0.0, 3.0, 1500)
SETTINGS = BacktestSettings(
    startup_steps=2,
    model="naive",
    history_seconds=120 * STEP,
    overload_budget=0.02,
    predictive_sweep=(),
    budget_sweep=(),
    baseline_sweep=(),
)


def test_the_policy_as_chosen_is_replayed_on_each_reference() -> None:
    plain = run_backtest(LOAD, STEP, SETTINGS)
    assert plain.references == {}
    result = run_backtest(LOAD, STEP, BacktestSettings(**{**vars(SETTINGS), "references": True}))
    assert tuple(result.references) == REFERENCES
    assert result.references_missing is None
    predictive = result.policies["predictive"]
    for replayed in result.references.values():
        assert replayed.budget == predictive.budget == 0.02
    # Both references see the cycle the last value lags: they win on both counts.
    for name in (HINDSIGHT, CLAIRVOYANT):
        outcome = result.references[name].outcome
        assert outcome.replica_minutes < predictive.outcome.replica_minutes
        assert outcome.overload_minutes <= predictive.outcome.overload_minutes
    # The forecast replayed as the policy's own is untouched by them.
    assert result.policies["predictive"].outcome == plain.policies["predictive"].outcome


def test_references_that_cannot_be_made_leave_the_backtest_with_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refused(*_: object, **__: object) -> dict[str, ForecastTable]:
        raise HindsightUnavailableError("21 steps are too few to fit a hindsight forecast")

    monkeypatch.setattr(backtest, "reference_tables", refused)
    result = run_backtest(LOAD, STEP, BacktestSettings(**{**vars(SETTINGS), "references": True}))
    assert result.references == {}
    assert result.references_missing == "21 steps are too few to fit a hindsight forecast"
    assert result.policies["predictive"].outcome.replica_minutes > 0
