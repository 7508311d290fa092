"""The shadow HPA runs exactly what the replay runs, however its load arrives, and keeps score."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from predictive_scaler.forecasting.forecast import Forecast
from predictive_scaler.scaling import DEFAULT_BEHAVIOR, Decision, LoadHistory, ScalingState
from predictive_scaler.simulation import ReplayConfig, replay
from predictive_scaler.simulation.fallback import following_hpa, worse_than_reactive
from predictive_scaler.simulation.hpa import HpaPolicy
from predictive_scaler.simulation.shadow import Observed, ShadowSpec, ShadowState, advance
from predictive_scaler.simulation.tallies import JUDGED, WINDOWS

STEP = 60.0
# Any whole minute: the shadow works in absolute steps, the replay from 0.
EPOCH = 1_700_000_040.0


def spec(**overrides: object) -> ShadowSpec:
    values: dict[str, object] = {
        "capacity": 10.0,
        "target": 7.0,
        "step_seconds": STEP,
        "startup_steps": 2,
        "min_replicas": 1,
        "max_replicas": 50,
        "behavior": DEFAULT_BEHAVIOR,
    }
    values.update(overrides)
    return ShadowSpec(**values)  # type: ignore[arg-type]


def history_until(load: np.ndarray, newest: int, points: int = 200) -> LoadHistory:
    """What the operator reads when sample ``newest`` is the newest: ``points`` up to it."""
    first = max(0, newest - points + 1)
    values = load[first : newest + 1]
    padded = np.concatenate([np.full(points - values.size, np.nan), values])
    return LoadHistory(padded, STEP, EPOCH + newest * STEP)


def observed(
    load: np.ndarray, newest: int, replicas: int = 4, desired: int = 4, points: int = 200
) -> Observed:
    return Observed(history_until(load, newest, points), replicas, replicas, desired)


def feed(load: np.ndarray, cuts: list[int], shadow_spec: ShadowSpec) -> ShadowState:
    """Evaluations that see samples up to each cut; the first starts the shadow."""
    state = None
    for newest in cuts:
        state = advance(state, shadow_spec, observed(load, newest))
        state = ShadowState.from_json(json.loads(json.dumps(state.to_json())))
    assert state is not None
    return state


def replayed(load: np.ndarray, start: int, initial: int, shadow_spec: ShadowSpec):  # type: ignore[no-untyped-def]
    config = ReplayConfig(shadow_spec.capacity, shadow_spec.startup_steps, STEP, start)
    policy = HpaPolicy(
        config,
        shadow_spec.target / shadow_spec.capacity,
        behavior=shadow_spec.behavior,
        min_replicas=shadow_spec.min_replicas,
        max_replicas=shadow_spec.max_replicas,
    )
    return replay(load, policy, config, initial=initial)


loads = st.lists(
    st.one_of(st.floats(0.0, 300.0), st.just(math.nan)), min_size=12, max_size=160
).map(np.array)


@settings(max_examples=60, deadline=None)
@given(load=loads, data=st.data())
def test_a_shadow_fed_in_any_pieces_runs_what_the_replay_runs(
    load: np.ndarray, data: st.DataObject
) -> None:
    # The first evaluation sees sample `first` newest: the shadow starts one
    # sample before it (the newest may still change), from the 4 replicas running.
    first = data.draw(st.integers(1, 5))
    cuts = sorted(
        set(data.draw(st.lists(st.integers(first, load.size - 1), max_size=40)))
        | {first, load.size - 1}
    )
    shadow_spec = spec(startup_steps=data.draw(st.integers(0, 4)))
    state = feed(load, cuts, shadow_spec)

    # The last sample is not settled, so the replay runs to the one before it.
    result = replayed(load[:-1], first, 4, shadow_spec)
    if result.replicas.size:
        assert state.hpa_replicas == int(result.replicas[-1])
    figures = state.tallies.figures(WINDOWS[2], state.consumed_until)
    assert figures.costs["hpa"].replica_minutes == pytest.approx(
        result.outcome.replica_minutes, abs=1e-6
    )
    assert figures.costs["hpa"].overload_minutes == pytest.approx(
        result.outcome.overload_minutes, abs=1e-6
    )
    assert figures.minutes == pytest.approx((load.size - 1 - first) * STEP / 60)


def test_the_shadow_scales_up_behind_the_load_and_charges_its_overload() -> None:
    load = np.concatenate([np.full(10, 20.0), np.full(20, 100.0)])
    state = feed(load, list(range(1, load.size)), spec(startup_steps=2))
    # Settled within the HPA's 10 % tolerance of the 7-per-replica target.
    assert abs(100.0 / (state.hpa_replicas * 7.0) - 1.0) <= 0.1
    figures = state.tallies.figures(WINDOWS[0], state.consumed_until)
    # Samples 1 to 28 are counted (29 is the newest, not yet settled). The
    # workload really ran 4 replicas, overloaded from the jump on; the HPA,
    # seeing the jump a step late with pods that take two steps, less.
    assert figures.minutes == 28.0
    assert figures.costs["predictive"].replica_minutes == 4 * 28.0
    assert figures.costs["predictive"].overload_minutes == 19.0
    assert 3.0 <= figures.costs["hpa"].overload_minutes < 19.0


def test_windows_roll_forward_and_keep_the_week() -> None:
    load = np.full(3 * 60 + 2, 20.0)  # three hours of minutes
    state = feed(load, [*range(1, load.size, 7), load.size - 1], spec())
    hour, day, week = (state.tallies.figures(w, state.consumed_until) for w in WINDOWS)
    # The hour window rolls at 5-minute resolution: 55 to 60 minutes.
    assert 55.0 <= hour.minutes <= 60.0
    assert day.minutes == week.minutes == load.size - 2


def test_the_lead_time_step_of_each_forecast_is_scored_when_its_load_comes_due() -> None:
    load = np.full(14, 10.0)
    shadow_spec = spec()

    def forecast(mean: float) -> Forecast:
        # Two steps ahead; only the second (the lead time's) is scored.
        lower, upper = np.array([0.0, mean - 1]), np.array([1.0, mean + 1])
        return Forecast("holt", np.array([0.0, mean]), lower, upper, 0.9)

    state = advance(None, shadow_spec, Observed(history_until(load, 5), 4, 4, 4, forecast(10.0)))
    state = advance(state, shadow_spec, Observed(history_until(load, 6), 4, 4, 4, forecast(13.0)))
    # Samples 7 (exact, inside 9-11) and 8 (3 off, outside 12-14) come due.
    state = advance(state, shadow_spec, observed(load, 11))
    figures = state.tallies.figures(WINDOWS[0], state.consumed_until)
    assert figures.forecasts == 2
    assert figures.coverage == 0.5
    scale = 1.0  # a constant history's naive scale falls back to 1
    assert figures.forecast_error == pytest.approx((0.0 + 3.0) / 2 / scale)


def test_a_new_step_or_a_gap_longer_than_the_history_restarts_the_fleets_not_the_tallies() -> None:
    load = np.full(200, 20.0)
    shadow_spec = spec()
    state = feed(load, [1, 10], shadow_spec)
    counted = state.tallies.figures(WINDOWS[2], state.consumed_until).minutes
    later = advance(state, shadow_spec, observed(load, 150, replicas=9, points=30))
    assert later.since == state.since
    assert later.hpa_replicas == 9  # taken over from the workload, not carried across the gap
    assert later.tallies.figures(WINDOWS[2], later.consumed_until).minutes == counted


class Reactive:
    """A policy that sizes for the newest sample at 7 per replica, holding at its first step."""

    name = "reactive"
    utilisation = 0.7
    budget: float | None = None

    def __init__(self, first: int) -> None:
        self.first = first

    def decide(self, t: int, observed: np.ndarray, replicas: int, ready_before: int) -> int:
        return replicas if t == self.first else math.ceil(observed[-1] / 7.0)


@settings(max_examples=40, deadline=None)
@given(load=st.lists(st.floats(1.0, 300.0), min_size=12, max_size=120).map(np.array))
def test_the_forecasts_decisions_replayed_are_what_replay_runs_on_them(load: np.ndarray) -> None:
    # Evaluated every step, each deciding from its newest sample: its decision
    # serves the next sample, as a replay policy's decision at t sees t - 1.
    shadow_spec = spec(startup_steps=2)
    state = None
    for newest in range(1, load.size):
        desired = math.ceil(load[newest] / 7.0)
        state = advance(state, shadow_spec, observed(load, newest, desired=desired))
    assert state is not None
    config = ReplayConfig(shadow_spec.capacity, shadow_spec.startup_steps, STEP, 1)
    expected = replay(load[:-1], Reactive(1), config, initial=4)
    figures = state.tallies.figures(WINDOWS[2], state.consumed_until)
    assert figures.costs["replayed"].replica_minutes == pytest.approx(
        expected.outcome.replica_minutes, abs=1e-6
    )
    assert figures.costs["replayed"].overload_minutes == pytest.approx(
        expected.outcome.overload_minutes, abs=1e-6
    )


def test_each_sample_is_charged_with_the_replicas_read_when_it_was_the_newest() -> None:
    load = np.full(10, 35.0)  # 4 ready replicas serve 40
    state = None
    for newest in range(1, load.size):
        ready = 3 if newest == 5 else 4  # one pod was not ready when sample 5 came in
        seen = Observed(history_until(load, newest), 4, ready, 4)
        state = advance(state, spec(), seen)
    assert state is not None
    figures = state.tallies.figures(WINDOWS[0], state.consumed_until)
    assert figures.costs["predictive"].overload_minutes == 1.0


def run_forecast(load: np.ndarray, desired_at: object, shadow_spec: ShadowSpec) -> ShadowState:
    state = None
    for newest in range(1, load.size):
        desired = desired_at(newest)  # type: ignore[operator]
        state = advance(state, shadow_spec, observed(load, newest, desired=desired))
    assert state is not None
    return state


def test_the_forecast_losing_on_both_counts_is_worse_than_reactive_and_can_be_followed() -> None:
    load = np.concatenate([np.full(40, 20.0), np.full(60, 60.0)])
    shadow_spec = spec(startup_steps=0)
    # Dear but never overloaded: not worse on both counts.
    assert not worse_than_reactive(run_forecast(load, lambda _: 30, shadow_spec), "replayed")
    # Flapping: dear and overloaded at once.
    state = run_forecast(load, lambda newest: 30 if newest % 2 else 3, shadow_spec)
    assert worse_than_reactive(state, "replayed")
    # The workload itself ran a steady 4: cheap, if overloaded.
    assert not worse_than_reactive(state)
    decision = Decision(30, 4, ("forecast",), ScalingState())
    followed = following_hpa(decision, state, shadow_spec)
    assert followed.desired_replicas == state.hpa_replicas == math.ceil(60.0 / 7.0)
    assert "shadow HPA" in followed.message


def test_no_verdict_on_a_handful_of_steps() -> None:
    load = np.full(20, 60.0)
    state = None
    for newest in range(1, load.size):
        state = advance(state, spec(startup_steps=0), observed(load, newest, replicas=1, desired=1))
    assert state is not None
    figures = state.tallies.figures(JUDGED, state.consumed_until)
    assert figures.costs["replayed"].overload_minutes > figures.costs["hpa"].overload_minutes
    assert not worse_than_reactive(state, "replayed")
