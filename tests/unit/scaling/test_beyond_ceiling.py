"""Overloads beyond the threshold's ceiling: what decisions leave, how samples are judged."""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pytest

from predictive_scaler.forecasting import Forecast
from predictive_scaler.scaling import Decision, LoadHistory, ScalingSpec, ScalingState, decide
from predictive_scaler.scaling.budget import HIGHEST, HourCount, OverloadTracker
from predictive_scaler.simulation import ReplayConfig
from predictive_scaler.simulation.policies import PredictivePolicy
from predictive_scaler.simulation.replay import replay

pytestmark = pytest.mark.unit

STEP = 60.0
# Forecast 10 at every step with a spread of 1: the ceiling provisions 10 + HIGHEST = 15.
MEAN = 10.0
CEILING = MEAN + HIGHEST


def constant_forecast(history: LoadHistory, horizon: int, level: float) -> Forecast:
    half = NormalDist().inv_cdf((1 + level) / 2)
    mean = np.full(horizon, MEAN)
    return Forecast("fake", mean, mean - half, mean + half, level)


SPEC = ScalingSpec(
    max_replicas=50, capacity_per_replica=1.0, overload_budget=0.01, lead_time_seconds=2 * STEP
)


def decided(state: ScalingState, newest: float, end_time: float, ready: int) -> Decision:
    history = LoadHistory(np.array([MEAN, newest]), STEP, end_time)
    return decide(
        SPEC,
        history,
        ready,
        state,
        now=end_time + STEP,
        forecaster=constant_forecast,
        ready_replicas=ready,
    )


def test_a_decision_leaves_the_ceiling_of_the_step_its_new_pods_serve_first() -> None:
    state = decided(ScalingState(), MEAN, 540.0, 10).state
    horizon = SPEC.horizon_steps(STEP)
    (ceiling,) = state.overload.ceilings
    assert ceiling.time == 540.0 + horizon * STEP
    assert ceiling.load == pytest.approx(CEILING)


@pytest.mark.parametrize(("load", "beyond"), [(CEILING + 1.0, 1), (CEILING - 1.0, 0)])
def test_an_overload_counts_beyond_the_ceiling_only_above_what_it_would_have_served(
    load: float, beyond: int
) -> None:
    state = ScalingState()
    for end_time in np.arange(6) * STEP:
        state = decided(state, MEAN, float(end_time), 12).state
    # The sample at 6 steps, sized (as every step here) for 15 replicas at the ceiling,
    # with 9 ready: overloaded either way.
    after = decided(state, load, 6 * STEP, 9)
    assert after.state.overload.overloaded == 1
    assert after.state.overload.beyond_ceiling == beyond
    assert after.beyond_ceiling is bool(beyond)
    # Seen again (a sync faster than the step), the sample is not judged twice.
    assert decided(after.state, load, 6 * STEP, 9).beyond_ceiling is False


def test_an_overload_no_decision_sized_is_not_counted_beyond() -> None:
    state = decided(ScalingState(), CEILING + 5.0, 540.0, 9).state
    assert state.overload.overloaded == 1
    assert state.overload.beyond_ceiling == 0


def test_ceilings_are_kept_only_for_steps_not_yet_counted() -> None:
    state = ScalingState()
    for end_time in np.arange(100) * STEP:
        # Two decisions a step, as with a sync faster than the step: one ceiling each.
        state = decided(state, MEAN, float(end_time), 12).state
        state = decided(state, MEAN, float(end_time), 12).state
    times = [c.time for c in state.overload.ceilings]
    assert len(times) == SPEC.horizon_steps(STEP)
    assert all(t > state.overload.counted_until for t in times)  # type: ignore[operator]


def test_a_status_written_before_the_ceilings_reads_with_none_beyond() -> None:
    old = {
        "overload": {
            "threshold": 2.0,
            "counted_until": 60.0,
            "hours": [{"start": 0.0, "samples": 2, "overloaded": 1}],
        }
    }
    tracker = ScalingState.from_json(old).overload
    assert tracker.hours == (HourCount(0.0, 2, 1, 0),)
    assert tracker.ceilings == ()
    assert tracker == OverloadTracker(2.0, 60.0, (HourCount(0.0, 2, 1),))


def test_the_replay_counts_the_steps_beyond_the_ceiling_as_decide_judges_them() -> None:
    # Capacity 10 a replica, start-up 1: the ceiling's 15 is two replicas, 20.
    config = ReplayConfig(capacity=10.0, startup_steps=1, step_seconds=STEP, start=1)
    load = np.array([5.0, 9.0, 19.0, 21.0, 25.0, 8.0, 8.0])
    policy = PredictivePolicy(
        config, 0.7, constant_forecast, history_steps=10, budget=0.01, behavior=None
    )
    result = replay(load, policy, config)
    overloaded = load[1:] > result.ready * config.capacity
    beyond = overloaded & (load[1:] > 2 * config.capacity)
    # 21 and 25 are more than two replicas serve, whatever the fleet did; the
    # last step is not judged (its sample would be counted by the next decision).
    assert beyond[:-1].sum() >= 2
    assert policy.beyond_ceiling == beyond[:-1].sum()
