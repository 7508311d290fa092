"""The predictive policy end to end on a clean daily-like cycle: it scales before the peaks."""

from __future__ import annotations

import math

import numpy as np
import pytest

from predictive_scaler.simulation import BacktestResult, BacktestSettings, run_backtest

STEP = 60.0
PERIOD = 60  # steps
STARTUP = 3  # steps
HISTORY = 150  # steps: two and a half periods before the first scored step
TARGET = 0.7

# 100 + 90 sin(2 pi t / 60): peaks of 190 at t = 15 + 60 k, troughs of 10 at t = 45 + 60 k.
STEPS = np.arange(6 * PERIOD, dtype=np.float64)
LOAD = 100.0 + 90.0 * np.sin(2 * np.pi * STEPS / PERIOD)


@pytest.fixture(scope="module")
def result() -> BacktestResult:
    settings = BacktestSettings(
        startup_steps=STARTUP,
        target=TARGET,
        model="holt+stl",
        season_length=PERIOD,
        history_seconds=HISTORY * STEP,
        predictive_sweep=(TARGET,),
        baseline_sweep=(TARGET,),
    )
    return run_backtest(LOAD, STEP, settings)


def scored_peaks(result: BacktestResult) -> list[int]:
    start = result.config.start
    return [t for t in range(start + PERIOD // 2, LOAD.size) if (t - PERIOD // 4) % PERIOD == 0]


def first_reaching(replicas: np.ndarray, start: int, peak: int, need: int) -> int | None:
    """The first step from the trough before ``peak`` at which ``replicas`` reach ``need``."""
    trough = peak - PERIOD // 2
    window = replicas[trough - start : peak + 1 - start]
    assert window[0] < need, "the count was already high at the trough"
    reached = np.flatnonzero(window >= need)
    return trough + int(reached[0]) if reached.size else None


def test_the_setup_is_what_the_test_means(result: BacktestResult) -> None:
    assert result.config.start == HISTORY
    assert result.config.startup_steps == STARTUP
    # Default capacity: p99.9 of the load (about 190) over 20 replicas.
    assert result.config.capacity == pytest.approx(190.0 / 20, rel=1e-3)
    assert set(result.table.models) == {"holt+stl"}
    assert scored_peaks(result) == [195, 255, 315]


def test_predictive_replicas_rise_a_startup_period_before_each_peak(
    result: BacktestResult,
) -> None:
    config = result.config
    predictive = result.policies["predictive"]
    hpa = result.policies["hpa"]
    per_replica = config.capacity * TARGET
    for peak in scored_peaks(result):
        need = math.ceil(LOAD[peak] / per_replica)
        reached = first_reaching(predictive.replicas, config.start, peak, need)
        assert reached is not None, peak
        # In seconds: replicas ordered at `reached` serve from `reached + S`.
        reached_at, peak_at = reached * STEP, peak * STEP
        assert reached_at <= peak_at - STARTUP * STEP, (peak, reached)
        # ... so they are ready, and enough, at the peak.
        assert predictive.ready[peak - config.start] >= need
        # The reactive baseline only follows: it gets there late, if at all.
        hpa_reached = first_reaching(hpa.replicas, config.start, peak, need)
        assert hpa_reached is None or hpa_reached > peak - STARTUP, (peak, hpa_reached)


def test_predictive_overloads_less_than_the_reactive_baseline(result: BacktestResult) -> None:
    predictive = result.policies["predictive"].outcome
    hpa = result.policies["hpa"].outcome
    assert hpa.overload_minutes > 0
    assert predictive.overload_minutes < hpa.overload_minutes
    assert predictive.unserved < hpa.unserved


def test_every_outcome_is_finite(result: BacktestResult) -> None:
    assert set(result.policies) == {"predictive", "hpa", "oracle", "oracle_at_full_utilisation"}
    for replayed in result.policies.values():
        outcome = replayed.outcome
        figures = [outcome.overload_minutes, outcome.replica_minutes, outcome.unserved]
        assert all(math.isfinite(figure) and figure >= 0 for figure in figures)
        assert outcome.replica_minutes > 0
        assert outcome.scaling_actions >= 0
    # The oracle knows the future: it never overloads, at the target or at 100 %.
    assert result.policies["oracle"].outcome.overload_minutes == 0
    assert result.policies["oracle_at_full_utilisation"].outcome.overload_minutes == 0


def test_the_sizing_split_follows_decides_steps_and_ends_at_what_was_held(
    result: BacktestResult,
) -> None:
    sizing = result.sizing
    # Every scored step decided from a forecast once the model was selected.
    scored = LOAD.size - result.config.start
    assert 0.9 * scored <= sizing.decisions <= scored
    means = sizing.means()
    assert means is not None
    forecast, sized_for, whole, asked = means
    # On this load, on average: headroom over the forecast (the interval's upper bound
    # at the target), rounding up, then the reactive floor and the scale-down window
    # each add (a scale-down may keep fewer than the horizon's peak needs, not here).
    assert forecast < sized_for <= whole <= asked
    held = result.policies["predictive"].replicas.mean()
    assert asked == pytest.approx(held, rel=0.05)
