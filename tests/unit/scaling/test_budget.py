"""The overload budget: the threshold's steering, its guarantee, and ``decide`` sized by it."""

from __future__ import annotations

import random
from statistics import NormalDist

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from predictive_scaler.forecasting import Forecast
from predictive_scaler.scaling import LoadHistory, ScalingSpec, ScalingState, decide
from predictive_scaler.scaling.budget import (
    BUCKET_SECONDS,
    HIGHEST,
    LOWEST,
    RATE,
    WINDOW_SECONDS,
    OverloadTracker,
    provisioned,
)

STEP = 60.0
NORMAL = NormalDist()


def test_the_threshold_starts_where_a_calibrated_forecast_would_keep_the_budget() -> None:
    tracker = OverloadTracker()
    assert tracker.current(0.01) == pytest.approx(NORMAL.inv_cdf(0.99))
    assert tracker.quantile(0.01) == pytest.approx(0.99)
    assert tracker.realised is None
    # A budget so small that its quantile lies beyond the range starts at the top.
    assert tracker.current(1e-12) == HIGHEST


def test_an_overload_raises_the_threshold_and_a_quiet_sample_lowers_it() -> None:
    start = OverloadTracker().current(0.02)
    over = OverloadTracker().count(0.02, 60.0, overloaded=True)
    assert over.current(0.02) == pytest.approx(start + RATE * 0.98)
    quiet = over.count(0.02, 120.0, overloaded=False)
    assert quiet.current(0.02) == pytest.approx(start + RATE * 0.98 - RATE * 0.02)
    assert quiet.realised == 0.5


def test_a_sample_is_counted_once_however_often_it_is_seen() -> None:
    tracker = OverloadTracker().count(0.01, 60.0, overloaded=True)
    assert tracker.count(0.01, 60.0, overloaded=True) is tracker
    assert tracker.count(0.01, 30.0, overloaded=True) is tracker
    assert tracker.samples == 1


def test_the_threshold_stays_within_its_bounds() -> None:
    tracker = OverloadTracker()
    for i in range(200):
        tracker = tracker.count(0.01, i * STEP, overloaded=True)
    assert tracker.current(0.01) == HIGHEST
    assert tracker.at_limit == "highest"
    for i in range(200, 200 + 20_000):
        tracker = tracker.count(0.01, i * STEP, overloaded=False)
    assert tracker.current(0.01) == LOWEST
    assert tracker.at_limit == "lowest"


def test_the_realised_share_covers_the_last_day_in_hourly_buckets() -> None:
    tracker = OverloadTracker()
    for i in range(60):  # the first hour: every sample overloaded
        tracker = tracker.count(0.01, i * STEP, overloaded=True)
    for i in range(60, 60 * 24):
        tracker = tracker.count(0.01, i * STEP, overloaded=False)
    assert tracker.realised == pytest.approx(60 / 1440)
    assert len(tracker.hours) == 24
    # One more hour and the overloaded one has left the window.
    for i in range(60 * 24, 60 * 25):
        tracker = tracker.count(0.01, i * STEP, overloaded=False)
    assert tracker.realised == 0.0
    assert all(h.start > 60 * 25 * STEP - WINDOW_SECONDS - BUCKET_SECONDS for h in tracker.hours)


@given(
    budget=st.floats(0.001, 0.2),
    flags=st.lists(st.booleans(), min_size=1, max_size=300),
)
def test_the_updates_telescope_while_the_threshold_is_within_its_bounds(
    budget: float, flags: list[bool]
) -> None:
    # The guarantee's whole proof: z_T - z_0 = RATE * sum(overloaded - budget).
    tracker = OverloadTracker()
    start = tracker.current(budget)
    clamped = False
    for i, overloaded in enumerate(flags):
        tracker = tracker.count(budget, i * STEP, overloaded)
        clamped |= tracker.at_limit is not None
    expected = start + RATE * sum(float(f) - budget for f in flags)
    if not clamped:
        assert tracker.current(budget) == pytest.approx(expected)


@pytest.mark.parametrize("bias", [-1.0, 0.0, 1.5])
@pytest.mark.parametrize("budget", [0.005, 0.01, 0.05])
def test_the_realised_share_converges_to_the_budget_whatever_the_forecast_bias(
    bias: float, budget: float
) -> None:
    # A forecast whose errors sit `bias` spreads off what its interval says:
    # provisioning at threshold z overloads with probability 1 - Phi(z - bias).
    rng = random.Random(7)
    tracker = OverloadTracker()
    samples = 50_000
    overloads = 0
    for i in range(samples):
        z = tracker.current(budget)
        overloaded = rng.random() < 1.0 - NORMAL.cdf(z - bias)
        overloads += overloaded
        tracker = tracker.count(budget, i * STEP, overloaded)
    # The theorem's bound, |share - budget| <= (range + rate) / (rate * T), here 0.0012.
    bound = (HIGHEST - LOWEST + RATE) / (RATE * samples)
    assert abs(overloads / samples - budget) <= bound
    assert tracker.current(budget) == pytest.approx(NORMAL.inv_cdf(1 - budget) + bias, abs=0.5)


def test_provisioned_load_is_threshold_spreads_above_the_mean() -> None:
    z90 = NORMAL.inv_cdf(0.95)
    forecast = Forecast(
        "fake", np.array([10.0, 20.0]), np.array([5.0, 10.0]), np.array([10 + z90, 20.0]), 0.9
    )
    # Spreads 1 and 0 (an interval without width provisions the mean).
    assert provisioned(forecast, 2.0) == pytest.approx([12.0, 20.0])
    assert provisioned(forecast, -1.0) == pytest.approx([9.0, 20.0])


# --- decide with a capacity and a budget ------------------------------------------------------


class SpreadForecaster:
    """Mean ``mean`` with a spread of 1 at every step."""

    def __init__(self, mean: float) -> None:
        self.mean = mean

    def __call__(self, history: LoadHistory, horizon: int, level: float) -> Forecast:
        half = NORMAL.inv_cdf((1 + level) / 2)
        mean = np.full(horizon, self.mean)
        return Forecast("fake", mean, mean - half, mean + half, level)


def budgeted(**fields: object) -> ScalingSpec:
    values: dict[str, object] = {
        "max_replicas": 50,
        "capacity_per_replica": 1.0,
        "overload_budget": 0.01,
        **fields,
    }
    return ScalingSpec.model_validate(values)


def test_exactly_one_of_target_and_capacity() -> None:
    with pytest.raises(ValidationError, match="exactly one of targetPerReplica"):
        ScalingSpec(max_replicas=5, target_per_replica=1.0, capacity_per_replica=1.0)
    with pytest.raises(ValidationError, match="exactly one of targetPerReplica"):
        ScalingSpec(max_replicas=5)
    with pytest.raises(ValidationError, match="overload_budget"):
        ScalingSpec(max_replicas=5, capacity_per_replica=1.0, overload_budget=0.0)


def test_decide_sizes_at_the_threshold_and_counts_the_newest_sample_once() -> None:
    scaling = budgeted()
    history = LoadHistory(np.array([9.0, 9.5, 10.0]), STEP, 540.0)
    first = decide(
        scaling, history, 10, ScalingState(), now=600.0, forecaster=SpreadForecaster(10.0)
    )
    # 10 ready replicas served 10.0: no overload, the threshold drops a little below z(0.99).
    z = NORMAL.inv_cdf(0.99) - RATE * 0.01
    assert first.state.overload.current(0.01) == pytest.approx(z)
    assert first.state.overload.counted_until == 540.0
    assert first.desired_replicas == 13  # ceil(10 + 2.32 spreads of 1)
    assert first.load_bound == pytest.approx(10.0 + z)
    assert "quantile 0.99 for a 1.00% overload budget" in first.message
    assert "13 replicas, capacity 1 each" in first.message
    # The same sample seen again (a faster sync than the step) moves nothing.
    again = decide(scaling, history, 10, first.state, now=620.0, forecaster=SpreadForecaster(10.0))
    assert again.state.overload == first.state.overload


def test_decide_counts_an_overload_against_the_ready_replicas_not_all() -> None:
    history = LoadHistory(np.array([10.0, 10.0]), STEP, 540.0)
    decision = decide(
        budgeted(),
        history,
        12,
        ScalingState(),
        now=600.0,
        forecaster=SpreadForecaster(10.0),
        ready_replicas=9,
    )
    assert decision.state.overload.realised == 1.0
    assert decision.state.overload.current(0.01) > NORMAL.inv_cdf(0.99)


def test_a_held_decision_counts_nothing() -> None:
    stale = LoadHistory(np.array([10.0, 10.0]), STEP, 0.0)
    decision = decide(
        budgeted(), stale, 10, ScalingState(), now=6000.0, forecaster=SpreadForecaster(10.0)
    )
    assert decision.held == "StaleMetrics"
    assert decision.state.overload == OverloadTracker()


def test_the_tracker_survives_a_round_trip_through_status() -> None:
    history = LoadHistory(np.array([10.0, 10.0]), STEP, 540.0)
    decision = decide(
        budgeted(), history, 9, ScalingState(), now=600.0, forecaster=SpreadForecaster(10.0)
    )
    assert ScalingState.from_json(decision.state.to_json()) == decision.state
    # A status written before the budget existed reads as a fresh tracker.
    assert ScalingState.from_json({"recommendations": []}).overload == OverloadTracker()
