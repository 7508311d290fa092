"""FollowHPA in the replay: the operator's fallback, step by step, through the same function."""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pytest

from predictive_scaler.forecasting import Forecast
from predictive_scaler.scaling import LoadHistory
from predictive_scaler.simulation import ReplayConfig
from predictive_scaler.simulation.hpa import HpaPolicy
from predictive_scaler.simulation.policies import PredictivePolicy
from predictive_scaler.simulation.replay import UNBOUNDED_REPLICAS, ReplayResult, replay
from predictive_scaler.simulation.shadow import ShadowSpec

pytestmark = pytest.mark.unit

STEP = 60.0
TARGET = 0.7
CONFIG = ReplayConfig(capacity=1.0, startup_steps=1, step_seconds=STEP, start=30)
SHADOW = ShadowSpec(
    capacity=1.0,
    target=TARGET,
    step_seconds=STEP,
    startup_steps=1,
    min_replicas=1,
    max_replicas=UNBOUNDED_REPLICAS,
    behavior=None,
)
# A steady load with noise: the HPA's 30 % headroom serves it almost always.
LOAD = 10.0 + np.random.default_rng(3).normal(0.0, 1.0, 900)


def erratic(history: LoadHistory, horizon: int, level: float) -> Forecast:
    """Three times the load for 20 steps, then a third of it for 20: worse on both counts."""
    block = int(history.end_time // (20 * STEP)) % 2
    mean = np.full(horizon, float(np.nanmean(history.values[-5:])) * (3.0 if block else 0.3))
    half = NormalDist().inv_cdf((1 + level) / 2)
    return Forecast("erratic", mean, mean - half, mean + half, level)


def run(follow: ShadowSpec | None) -> tuple[ReplayResult, PredictivePolicy]:
    policy = PredictivePolicy(
        CONFIG, TARGET, erratic, history_steps=30, budget=0.01, follow_hpa=follow
    )
    return replay(LOAD, policy, CONFIG), policy


def test_a_forecast_that_loses_on_both_counts_hands_over_to_the_shadow_hpa() -> None:
    hpa = replay(LOAD, HpaPolicy(CONFIG, TARGET), CONFIG).outcome
    alone, unfollowed = run(None)
    assert unfollowed.followed_steps == 0
    # The premise: on its own the forecast loses to the HPA on both counts.
    assert alone.outcome.overload_minutes > hpa.overload_minutes
    assert alone.outcome.replica_minutes > hpa.replica_minutes

    following, policy = run(SHADOW)
    # It follows once a judged window has shown it losing, and for most of the rest.
    assert policy.followed_steps > 0.5 * (LOAD.size - CONFIG.start)
    assert following.outcome.overload_minutes < alone.outcome.overload_minutes
    assert following.outcome.replica_minutes < alone.outcome.replica_minutes


def test_a_forecast_that_wins_is_never_overruled() -> None:
    def steady(history: LoadHistory, horizon: int, level: float) -> Forecast:
        mean = np.full(horizon, 10.0)
        return Forecast("steady", mean, mean - 1.645, mean + 1.645, level)

    alone = replay(
        LOAD, PredictivePolicy(CONFIG, TARGET, steady, history_steps=30, budget=0.01), CONFIG
    )
    policy = PredictivePolicy(
        CONFIG, TARGET, steady, history_steps=30, budget=0.01, follow_hpa=SHADOW
    )
    following = replay(LOAD, policy, CONFIG)
    assert policy.followed_steps == 0
    np.testing.assert_array_equal(following.replicas, alone.replicas)
