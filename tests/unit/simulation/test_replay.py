"""The replay model's bookkeeping (design.md section 5) on traces worked out by hand."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.scaling import DEFAULT_BEHAVIOR, Behavior
from predictive_scaler.simulation import Outcome, ReplayConfig, replay
from predictive_scaler.simulation.elasticity import Elasticity
from predictive_scaler.simulation.hpa import HpaPolicy
from predictive_scaler.simulation.policies import OraclePolicy
from predictive_scaler.simulation.replay import Fleet, default_capacity


def figures(outcome: Outcome) -> Outcome:
    """The four figures alone (the elasticity metrics have tests of their own)."""
    return dataclasses.replace(outcome, elasticity=Elasticity())


class Scripted:
    """Runs the replica counts of ``plan`` (step -> replicas), else keeps the current count.

    Records every call so a test can check what the replay showed the policy.
    """

    name = "scripted"
    budget: float | None = None

    def __init__(self, plan: dict[int, int], utilisation: float = 1.0) -> None:
        self.plan = plan
        self.utilisation = utilisation
        self.observed: list[FloatArray] = []
        self.calls: list[tuple[int, int, int]] = []

    def decide(self, t: int, observed: FloatArray, replicas: int, ready_before: int) -> int:
        self.observed.append(observed.copy())
        self.calls.append((t, replicas, ready_before))
        return self.plan.get(t, replicas)


def trace(values: Sequence[float]) -> FloatArray:
    return np.array(values, dtype=np.float64)


def config(startup: int, *, step: float = 60.0, capacity: float = 10.0) -> ReplayConfig:
    return ReplayConfig(capacity=capacity, startup_steps=startup, step_seconds=step, start=1)


# Capacity 10 per replica, start-up 2 steps, scored from step 1.
# The first start-up period (steps 1..3) carries 10, so the replay starts with 1 ready replica.
#
#   step t        1   2   3   4   5   6   7
#   load         10  10  10  25  25   8   8
#   plan              .   3           1
#   replicas      1   1   3   3   3   1   1     (the 2 added at t=3 cost from t=3 ...)
#   ready         1   1   1   1   3   1   1     (... and serve from t=3+2=5)
#   shortfall     0   0   0  15   0   0   0     (25 - 1*10 at t=4)
#
# replica-steps = 1+1+3+3+3+1+1 = 13; overload steps = 1; actions = 2 (t=3, t=6);
# unserved = 15 load units.
STARTUP_LOAD = trace([10, 10, 10, 10, 25, 25, 8, 8])
STARTUP_PLAN = {3: 3, 6: 1}


def test_a_replica_serves_after_the_startup_delay_and_costs_from_the_start() -> None:
    result = replay(STARTUP_LOAD, Scripted(STARTUP_PLAN), config(2))
    assert result.replicas.tolist() == [1, 1, 3, 3, 3, 1, 1]
    assert result.ready.tolist() == [1, 1, 1, 1, 3, 1, 1]
    assert figures(result.outcome) == Outcome(
        overload_minutes=1.0, replica_minutes=13.0, scaling_actions=2, unserved=15.0
    )
    assert result.policy == "scripted"
    assert result.utilisation == 1.0


def test_a_30s_step_halves_the_minutes_but_not_the_unserved_load() -> None:
    # Same steps, each 30 s: 13 replica-steps = 6.5 replica-minutes, 1 overload step = 0.5 min.
    result = replay(STARTUP_LOAD, Scripted(STARTUP_PLAN), config(2, step=30.0))
    assert figures(result.outcome) == Outcome(
        overload_minutes=0.5, replica_minutes=6.5, scaling_actions=2, unserved=15.0
    )


def test_without_startup_delay_a_new_replica_serves_at_once() -> None:
    # S=0: the first period is step 1 alone (10 -> 1 replica); the 3 added at t=3 are
    # ready at t=3, so the 25 at t=4 is served.
    #   replicas 1 1 3 3 3 1 1, ready the same; cost 13, no overload.
    result = replay(STARTUP_LOAD, Scripted(STARTUP_PLAN), config(0))
    assert result.ready.tolist() == result.replicas.tolist() == [1, 1, 3, 3, 3, 1, 1]
    assert figures(result.outcome) == Outcome(0.0, 13.0, 2, 0.0)


def test_removals_take_starting_replicas_first_newest_first() -> None:
    # Capacity 10, start-up 3, load 10 throughout: the replay starts with 1 ready replica.
    #
    #   step t        1   2   3   4   5   6
    #   plan          2   3   2
    #   replicas      2   3   2   2   2   2
    #   fleet ready-at after the step's scaling:
    #     t=1  [-inf, 4]           (one added, ready at 1+3=4)
    #     t=2  [-inf, 4, 5]        (one added, ready at 2+3=5)
    #     t=3  [-inf, 4]           (the newest starting one, ready-at 5, is removed)
    #   ready         1   1   1   2   2   2     (had the older one gone, 1 until t=5)
    #
    # replica-steps = 2+3+2+2+2+2 = 13; actions: t=1, t=2, t=3 = 3; never overloaded.
    policy = Scripted({1: 2, 2: 3, 3: 2})
    result = replay(trace([10] * 7), policy, config(3))
    assert result.replicas.tolist() == [2, 3, 2, 2, 2, 2]
    assert result.ready.tolist() == [1, 1, 1, 2, 2, 2]
    assert figures(result.outcome) == Outcome(0.0, 13.0, 3, 0.0)
    # What the policy was told: (t, replicas before deciding, ready during t-1).
    assert policy.calls == [(1, 1, 1), (2, 2, 1), (3, 3, 1), (4, 2, 1), (5, 2, 2), (6, 2, 2)]


def test_removing_more_than_the_starting_ones_removes_ready_replicas() -> None:
    # Capacity 10, start-up 2, 3 ready at the start (load 30 in steps 1..3).
    #   t=1 plan 5: ready-at [-inf, -inf, -inf, 3, 3]; t=2 plan 2: both starting go and
    #   one ready one: [-inf, -inf].
    #   step t     1   2   3   4
    #   load      30  30  30  30
    #   replicas   5   2   2   2
    #   ready      3   2   2   2
    #   shortfall  0  10  10  10     -> 3 overload steps, 30 unserved, cost 11, 2 actions
    result = replay(trace([30] * 5), Scripted({1: 5, 2: 2}), config(2))
    assert result.replicas.tolist() == [5, 2, 2, 2]
    assert result.ready.tolist() == [3, 2, 2, 2]
    assert figures(result.outcome) == Outcome(3.0, 11.0, 2, 30.0)


class OneEntryPerReplica:
    """The fleet as the replay model states it: each replica's ready step, sorted."""

    def __init__(self, ready: int) -> None:
        self.ready_at = [-math.inf] * ready

    def scale_to(self, replicas: int, t: int, startup_steps: int) -> None:
        if replicas > len(self.ready_at):
            self.ready_at.extend([t + startup_steps] * (replicas - len(self.ready_at)))
        else:
            del self.ready_at[replicas:]

    def ready(self, t: int) -> int:
        return sum(at <= t for at in self.ready_at)


@given(
    st.integers(0, 5),
    st.integers(0, 4),
    st.lists(st.integers(0, 12), min_size=1, max_size=30),
)
def test_the_fleets_cohorts_count_as_one_entry_per_replica_would(
    initial: int, startup: int, plan: list[int]
) -> None:
    fleet, reference = Fleet(initial), OneEntryPerReplica(initial)
    for t, replicas in enumerate(plan):
        fleet.scale_to(replicas, t, startup)
        reference.scale_to(replicas, t, startup)
        assert len(fleet) == len(reference.ready_at)
        assert fleet.ready(t) == reference.ready(t)
        assert fleet.starting_at(t) == [at for at in reference.ready_at if at > t]


def test_a_glitch_asking_for_1e11_replicas_costs_a_number_not_the_memory() -> None:
    load = trace([10.0] * 6)
    load[3] = 1e12  # a metric glitch: 10^11 replicas of capacity 10
    result = replay(load, OraclePolicy(load, config(1), 1.0), config(1))
    assert result.replicas.max() == 10**11
    assert result.outcome.overload_minutes == 0.0


def test_missing_load_is_neither_overload_nor_unserved() -> None:
    # Capacity 10, no start-up delay, 1 replica throughout (the first period is NaN: 1).
    #   step t     1    2    3    4
    #   load      NaN  30  NaN  10
    #   shortfall  -   20   -    0     -> 1 overload step, 20 unserved, 4 replica-steps
    load = trace([5, math.nan, 30, math.nan, 10])
    policy = Scripted({})
    result = replay(load, policy, config(0))
    assert result.replicas.tolist() == [1, 1, 1, 1]
    assert figures(result.outcome) == Outcome(1.0, 4.0, 0, 20.0)


def test_a_policy_sees_exactly_the_load_before_its_step() -> None:
    load = trace([3, 1, 4, 1, 5, 9, 2, 6, math.nan, 5])
    policy = Scripted({4: 2, 6: 1})
    replay(load, policy, config(2))
    assert [t for t, _, _ in policy.calls] == list(range(1, 10))
    for (t, _, _), observed in zip(policy.calls, policy.observed, strict=True):
        np.testing.assert_array_equal(observed, load[:t])


def test_scoring_starts_at_config_start() -> None:
    # From step 3 on: load 10 10 40 with 1 replica: 1 overload step, 30 unserved, 3 steps.
    load = trace([500, 500, 500, 10, 10, 40])
    start_3 = ReplayConfig(capacity=10.0, startup_steps=1, step_seconds=60.0, start=3)
    result = replay(load, Scripted({}), start_3)
    assert result.replicas.tolist() == [1, 1, 1]
    assert figures(result.outcome) == Outcome(1.0, 3.0, 0, 30.0)
    # Demand 1 1 4 against 1 ready replica: short by 3 of 4 in one step of three;
    # demand rose while supply stayed in the last of the two transitions.
    scored = result.outcome.elasticity
    assert scored.under_accuracy == pytest.approx(25.0)
    assert scored.under_timeshare == pytest.approx(100 / 3)
    assert (scored.over_accuracy, scored.over_timeshare) == (0.0, 0.0)
    assert scored.instability == pytest.approx(50.0)


def test_the_first_step_compares_with_the_initial_count() -> None:
    # 1 replica at the start; the policy holds 2 from step 1: one scaling action.
    result = replay(trace([10] * 4), Scripted({1: 2}), config(0))
    assert result.replicas.tolist() == [2, 2, 2]
    assert result.outcome.scaling_actions == 1


def test_bad_configs_and_traces_are_refused() -> None:
    with pytest.raises(ValueError, match="capacity"):
        ReplayConfig(capacity=0.0, startup_steps=1, step_seconds=60.0, start=1)
    with pytest.raises(ValueError, match="startup_steps"):
        ReplayConfig(capacity=1.0, startup_steps=-1, step_seconds=60.0, start=1)
    with pytest.raises(ValueError, match="replay starts at step 5"):
        replay(trace([1, 2, 3]), Scripted({}), ReplayConfig(1.0, 0, 60.0, 5))


# --- default capacity ---------------------------------------------------------------------


def test_default_capacity_is_the_99_9th_percentile_over_20() -> None:
    # 0..1000 (1001 points): the 99.9th percentile is at index 0.999 * 1000 = 999 exactly.
    assert default_capacity(np.arange(1001.0)) == pytest.approx(999.0 / 20)
    # One spike in 1000 points barely moves it: index 0.999 * 999 = 998.001, between
    # 10 and 1000: 10 + 0.001 * 990 = 10.99, so the capacity is 0.5495, not 1000 / 20.
    spiky = np.append(np.full(999, 10.0), 1000.0)
    assert default_capacity(spiky) == pytest.approx(10.99 / 20)
    # Missing samples are ignored.
    with_gaps = np.append(np.arange(1001.0), [math.nan, math.inf])
    assert default_capacity(with_gaps) == pytest.approx(999.0 / 20)


def test_default_capacity_needs_a_positive_load() -> None:
    with pytest.raises(ValueError, match="no positive values"):
        default_capacity(np.zeros(10))
    with pytest.raises(ValueError, match="no positive values"):
        default_capacity(np.full(10, math.nan))


# --- oracle -------------------------------------------------------------------------------


@given(
    values=st.lists(
        st.floats(min_value=0.01, max_value=1e6, allow_nan=False), min_size=2, max_size=60
    ),
    startup=st.integers(0, 5),
    utilisation=st.floats(min_value=0.3, max_value=1.0, exclude_min=True),
)
# A constant load at full utilisation: load / capacity is 20 plus a rounding error, which
# the sizing reads as 20 replicas; 20 * capacity then falls short of the load by an ulp.
@example(values=[7.948648648648649] * 10, startup=1, utilisation=1.0)
def test_the_oracle_never_overloads(values: list[float], startup: int, utilisation: float) -> None:
    load = trace(values)
    replay_config = ReplayConfig(default_capacity(load), startup, 60.0, start=1)
    result = replay(load, OraclePolicy(load, replay_config, utilisation), replay_config)
    assert result.outcome.overload_minutes == 0.0
    assert result.outcome.unserved == 0.0
    assert (result.ready >= 1).all()


def test_the_oracle_holds_what_the_next_startup_period_needs() -> None:
    # Capacity 10, U 0.5 (5 per replica), start-up 1: at t it holds ceil(max(L[t], L[t+1]) / 5).
    #   step t   1   2   3   4
    #   load    10  30  10  10
    #   holds    6   6   2   2
    load = trace([0, 10, 30, 10, 10])
    replay_config = config(1)
    result = replay(load, OraclePolicy(load, replay_config, 0.5), replay_config)
    assert result.replicas.tolist() == [6, 6, 2, 2]


# --- hpa ----------------------------------------------------------------------------------

# Capacity 10 at U 0.5: 5 load units per replica. A load of 50 needs 10 replicas.
HPA_CONFIG = ReplayConfig(capacity=10.0, startup_steps=2, step_seconds=60.0, start=1)


def hpa_replicas(values: Sequence[float], behavior: Behavior | None = None) -> list[int]:
    result = replay(trace(values), HpaPolicy(HPA_CONFIG, 0.5, behavior=behavior), HPA_CONFIG)
    replicas: list[int] = result.replicas.tolist()
    return replicas


def test_hpa_scales_up_one_step_after_a_step_increase_and_holds_while_pods_start() -> None:
    # Load doubles at t=5. The decision at t=5 sees L[4] = 50 (no change); at t=6 it sees
    # 100: ratio 100 / (10 * 5) = 2 -> 20 replicas (allowed: max(10 + 4, 2 * 10) = 20).
    # Those 10 start at t=6 and serve from t=8. At t=7 only 10 are ready (ratio 2 on ready
    # pods), but counting the starting ones idle the ratio is 100 / (20 * 5) = 1: hold 20.
    # From t=8, 20 ready: ratio 1, hold.
    replicas = hpa_replicas([50] * 5 + [100] * 8)
    assert replicas == [10] * 5 + [20] * 7


def test_hpa_does_nothing_within_its_10_percent_tolerance() -> None:
    # +5 %: ratio 52.5 / 50 = 1.05 is within the tolerance.
    assert hpa_replicas([50] * 5 + [52.5] * 8) == [10] * 12
    # +12 %: ratio 1.12 -> ceil(1.12 * 10) = 12.
    assert hpa_replicas([50] * 5 + [56] * 8) == [10] * 5 + [12] * 7


def test_hpa_scale_down_waits_for_the_300s_window() -> None:
    # Load halves at t=5; from t=6 the HPA recommends 5 but the 10 recommended at t=1..5
    # hold it at 10. With behavior, a recommendation counts while newer than 300 s: the
    # last (t=5, 300 s) has left at t=10. Without, the legacy path keeps one exactly 300 s
    # old too: one step more.
    assert hpa_replicas([50] * 5 + [25] * 8, DEFAULT_BEHAVIOR) == [10] * 9 + [5] * 3
    assert hpa_replicas([50] * 5 + [25] * 8) == [10] * 10 + [5] * 2


def test_hpa_holds_when_the_last_sample_is_missing() -> None:
    replicas = hpa_replicas([50] * 5 + [math.nan] + [50] * 3)
    assert replicas == [10] * 8


def test_a_new_hpa_does_not_scale_below_its_first_count_within_its_window() -> None:
    # Load a quarter of what the initial 10 serve from the start: a new HPA remembers
    # its 10 first and holds them for its 300 s window (legacy and default behavior alike).
    for rules in (None, DEFAULT_BEHAVIOR):
        replicas = replay(
            trace([50] + [12.5] * 9),
            HpaPolicy(HPA_CONFIG, 0.5, behavior=rules),
            HPA_CONFIG,
            initial=10,
        ).replicas.tolist()
        assert replicas[:5] == [10] * 5, rules
        assert replicas[-1] < 10, rules


def test_a_utilization_hpa_compares_a_whole_percent() -> None:
    # 10 replicas at a 50 % target (5 per replica): a load of 55.45 is 55.45 %, read as
    # 55 %, a ratio of 1.1, within the tolerance; 56 % is a ratio of 1.12 and scales to 12.
    def run(load: float) -> list[int]:
        policy = HpaPolicy(HPA_CONFIG, 0.5)
        result = replay(trace([50.0] + [load] * 4), policy, HPA_CONFIG, initial=10)
        replicas: list[int] = result.replicas.tolist()
        return replicas

    assert run(55.45) == [10] * 4
    assert run(56.0) == [10, 12, 12, 12]
