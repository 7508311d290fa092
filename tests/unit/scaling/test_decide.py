"""``decide``: forecast sizing, reactive floor, stabilisation, holds, bounds, and state."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from predictive_scaler.forecasting import Forecast, ScheduledSelection, make_model
from predictive_scaler.forecasting.seasons import TimedSeries
from predictive_scaler.scaling import (
    Decision,
    Forecaster,
    LoadHistory,
    ScalingSpec,
    ScalingState,
    decide,
)
from predictive_scaler.scaling.behavior import DEFAULT_BEHAVIOR
from predictive_scaler.scaling.normalization import TimedValue

STEP = 60.0


class FakeForecaster:
    """Returns the given upper bound (and mean), cut or padded to the horizon asked for."""

    def __init__(self, upper: Sequence[float], mean: Sequence[float] | None = None) -> None:
        self.upper = list(upper)
        self.mean = list(mean) if mean is not None else [u * 0.8 for u in upper]
        self.calls: list[tuple[int, float]] = []

    def __call__(self, history: LoadHistory, horizon: int, level: float) -> Forecast:
        self.calls.append((horizon, level))

        def fit(values: list[float]) -> list[float]:
            return (values + [values[-1]] * horizon)[:horizon]

        mean, upper = fit(self.mean), fit(self.upper)
        return Forecast("fake", np.array(mean), np.array(mean) * 0.5, np.array(upper), level)


class FailingForecaster:
    def __init__(self, error: Exception) -> None:
        self.error = error
        self.calls = 0

    def __call__(self, history: LoadHistory, horizon: int, level: float) -> Forecast:
        self.calls += 1
        raise self.error


def spec(**fields: object) -> ScalingSpec:
    values: dict[str, object] = {"max_replicas": 50, "target_per_replica": 10.0, **fields}
    return ScalingSpec.model_validate(values)


def fresh(values: Sequence[float], now: float) -> LoadHistory:
    """A history whose last sample was taken one step before ``now``."""
    return LoadHistory(np.array(values, dtype=np.float64), STEP, now - STEP)


def run(
    scaling: ScalingSpec,
    values: Sequence[float],
    current: int,
    forecaster: Forecaster,
    *,
    state: ScalingState | None = None,
    now: float = 600.0,
) -> Decision:
    return decide(
        scaling,
        fresh(values, now),
        current,
        state or ScalingState(),
        now=now,
        forecaster=forecaster,
    )


# --- sizing -------------------------------------------------------------------------------


def test_sizes_a_scale_up_for_the_step_when_new_pods_are_ready() -> None:
    fake = FakeForecaster(upper=[10.0, 20.0, 35.0], mean=[8.0, 15.0, 30.0])
    decision = run(spec(), [20.0, 20.0, 20.0], 2, fake)
    # Pods added now serve from the horizon's last step: ceil(35 / 10 per replica) = 4.
    assert decision.desired_replicas == 4
    assert decision.load_bound == 35.0
    assert decision.held is None
    assert decision.limit is None
    assert decision.forecast is not None
    assert decision.forecast.model == "fake"
    assert decision.changes_replicas
    message = decision.message
    assert (
        "fake forecast 30 when new pods are ready (upper bound at 90%: 35) -> 4 replicas, "
        "target 10 each"
    ) in message
    assert "4 replicas (from 2)" in message


def test_a_peak_before_new_pods_are_ready_is_not_bought_for_but_kept_for() -> None:
    # A peak at the second step: pods added now would come too late for it...
    fake = FakeForecaster(upper=[10.0, 35.0, 20.0], mean=[8.0, 30.0, 15.0])
    assert run(spec(), [20.0, 20.0, 20.0], 2, fake).desired_replicas == 2
    # ...but pods removed now could not be back for it: a scale-down keeps 4.
    decision = run(spec(behavior=DEFAULT_BEHAVIOR), [20.0] * 3, 6, fake)
    assert (decision.desired_replicas, decision.load_bound) == (4, 35.0)
    assert "fake forecast peak 30 within 3m (upper bound at 90%: 35) -> keep 4" in decision.message
    # Never more than run now: a scale-down is not a reason to scale up.
    assert run(spec(), [20.0] * 3, 3, fake).desired_replicas == 3


@pytest.mark.parametrize(
    ("lead", "step", "horizon"),
    [
        (120.0, 60.0, 3),  # 2 steps of lead time + the decision step
        (90.0, 60.0, 3),  # 1.5 steps round up to 2
        (121.0, 60.0, 4),
        (0.0, 60.0, 1),
        (120.0, 30.0, 5),
    ],
)
def test_forecaster_is_asked_for_the_lead_time_in_steps_plus_one(
    lead: float, step: float, horizon: int
) -> None:
    fake = FakeForecaster(upper=[10.0])
    history = LoadHistory(np.array([10.0, 10.0]), step, 600.0)
    decide(
        spec(lead_time_seconds=lead, interval=0.8),
        history,
        1,
        ScalingState(),
        now=600.0 + step,
        forecaster=fake,
    )
    assert fake.calls == [(horizon, 0.8)]


def test_reactive_floor_when_the_forecast_is_below_the_current_load() -> None:
    fake = FakeForecaster(upper=[30.0])
    decision = run(spec(), [40.0, 60.0, 75.0], 5, fake)
    # The forecast needs 3, the current load 75 needs ceil(7.5) = 8.
    assert decision.desired_replicas == 8
    assert "reactive floor: the current load 75 needs 8" in decision.message


def test_no_floor_note_when_the_forecast_already_asks_for_more() -> None:
    decision = run(spec(), [40.0, 60.0, 75.0], 5, FakeForecaster(upper=[95.0]))
    assert decision.desired_replicas == 10
    assert "reactive floor" not in decision.message


def test_forecast_notes_are_passed_on() -> None:
    def noted(history: LoadHistory, horizon: int, level: float) -> Forecast:
        values = np.full(horizon, 20.0)
        return Forecast("m", values, values, values, level, ("naive forecast used: short",))

    decision = run(spec(), [20.0], 2, noted)
    assert "forecast note: naive forecast used: short" in decision.reasons


# --- scale-down stabilisation over successive decisions -----------------------------------


def test_scale_down_waits_for_the_stabilization_window() -> None:
    scaling = spec(behavior=DEFAULT_BEHAVIOR)
    state = ScalingState()
    # t=0: the forecast needs 8 and 8 run.
    first = run(scaling, [80.0] * 5, 8, FakeForecaster(upper=[80.0]), state=state, now=0.0)
    assert first.desired_replicas == 8
    state = first.state
    assert state.recommendations == (TimedValue(0.0, 8),)
    replicas = 8
    timeline = {}
    for now in (60.0, 120.0, 180.0, 240.0, 300.0, 360.0):
        decision = run(
            scaling, [20.0] * 5, replicas, FakeForecaster(upper=[20.0]), state=state, now=now
        )
        timeline[now] = (decision.desired_replicas, decision.limit)
        state = decision.state.after_scale(
            scaling.effective_behavior, now, replicas, decision.desired_replicas
        )
        if decision.limit == "ScaleDownStabilized":
            assert "held at 8" in decision.message
            assert "300s scale-down window" in decision.message
        replicas = decision.desired_replicas
    # The 8 recommended at t=0 holds until t=300, when it leaves the 300 s window.
    held = (8, "ScaleDownStabilized")
    assert timeline == {
        60.0: held,
        120.0: held,
        180.0: held,
        240.0: held,
        300.0: (2, None),
        360.0: (2, None),
    }
    assert state.last_scale_time == 300.0
    assert state.scale_down_events == (TimedValue(300.0, 6),)


def test_scale_up_is_rate_limited_and_says_so() -> None:
    decision = run(spec(), [10.0], 2, FakeForecaster(upper=[300.0]))
    # 30 replicas wanted; from 2 the default policies allow max(2 + 4, 2 * 2) = 6.
    assert decision.desired_replicas == 6
    assert decision.limit == "ScaleUpLimit"
    assert "scale-up limited to 6 by behavior.scaleUp policies" in decision.message


# --- holds --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "words"),
    [
        ([math.nan] * 6, "no load samples"),
        (
            [math.nan, math.nan, math.nan, 10.0, 10.0],
            "60% of the 4m history window has no samples: forecasting waits for half of it, "
            "1 more sample (1m at one a step)",
        ),
        (
            [math.nan] * 9 + [10.0],
            "90% of the 9m history window has no samples: forecasting waits for half of it, "
            "4 more samples (4m at one a step)",
        ),
    ],
)
def test_missing_data_holds_the_current_count(values: list[float], words: str) -> None:
    fake = FakeForecaster(upper=[500.0])
    state = ScalingState(recommendations=(TimedValue(500.0, 3),))
    decision = run(spec(), values, 3, fake, state=state)
    assert decision.desired_replicas == 3
    assert decision.held == "MissingMetrics"
    assert words in decision.message
    assert "holding 3 replicas" in decision.message
    assert fake.calls == []
    assert decision.state is state


def test_half_the_samples_missing_is_still_enough() -> None:
    decision = run(spec(), [10.0, math.nan, 10.0, math.nan], 1, FakeForecaster(upper=[25.0]))
    assert decision.held is None
    assert decision.desired_replicas == 3


def test_stale_data_holds_the_current_count() -> None:
    fake = FakeForecaster(upper=[500.0])
    history = LoadHistory(np.array([10.0, 20.0, 30.0]), STEP, 600.0)
    decision = decide(spec(), history, 4, ScalingState(), now=600.0 + 181.0, forecaster=fake)
    assert (decision.desired_replicas, decision.held) == (4, "StaleMetrics")
    assert "the newest load sample is 3.02m old" in decision.message
    assert fake.calls == []
    # Three steps old is not yet stale.
    ok = decide(spec(), history, 4, ScalingState(), now=600.0 + 180.0, forecaster=fake)
    assert ok.held is None


def test_trailing_gaps_make_the_data_stale() -> None:
    # The newest finite sample is 4 steps before the last one, taken one step before now.
    values = [10.0] * 6 + [math.nan] * 4
    decision = run(spec(), values, 4, FakeForecaster(upper=[500.0]))
    assert decision.held == "StaleMetrics"
    assert "5m old" in decision.message


@pytest.mark.parametrize("error", [ValueError("boom"), ZeroDivisionError("boom")])
def test_a_failed_forecast_holds_and_never_scales_down(error: Exception) -> None:
    failing = FailingForecaster(error)
    decision = run(spec(), [20.0, 20.0], 6, failing)
    assert failing.calls == 1
    assert (decision.desired_replicas, decision.held) == (6, "ForecastFailed")
    assert decision.forecast is None
    assert decision.load_bound is None
    assert "no forecast (boom): holding 6 unless load needs more" in decision.message
    assert "stay at 6 replicas" in decision.message


def test_a_failed_forecast_still_honours_the_reactive_floor() -> None:
    decision = run(spec(), [20.0, 95.0], 6, FailingForecaster(ValueError("no model")))
    assert (decision.desired_replicas, decision.held) == (10, "ForecastFailed")
    assert "reactive floor: the current load 95 needs 10" in decision.message


def test_a_failed_forecast_records_a_recommendation_that_blocks_scale_down() -> None:
    scaling = spec(behavior=DEFAULT_BEHAVIOR)
    failed = run(scaling, [20.0], 6, FailingForecaster(ValueError("x")), now=0.0)
    assert failed.state.recommendations == (TimedValue(0.0, 6),)
    later = run(scaling, [20.0], 6, FakeForecaster(upper=[10.0]), state=failed.state, now=60.0)
    assert (later.desired_replicas, later.limit) == (6, "ScaleDownStabilized")


def test_other_forecaster_errors_are_not_swallowed() -> None:
    with pytest.raises(RuntimeError, match="bug"):
        run(spec(), [20.0], 2, FailingForecaster(RuntimeError("bug")))


# --- bounds -------------------------------------------------------------------------------


def test_never_above_max_replicas() -> None:
    scaling = spec(min_replicas=3, max_replicas=7)
    decision = run(scaling, [50.0], 5, FakeForecaster(upper=[100.0]))
    assert (decision.desired_replicas, decision.limit) == (7, "TooManyReplicas")
    assert "limited to maxReplicas 7" in decision.message
    assert "fake forecast 80 when new pods are ready" in decision.message


def test_never_below_min_replicas() -> None:
    scaling = spec(min_replicas=3, max_replicas=7)
    decision = run(scaling, [5.0], 5, FakeForecaster(upper=[0.0]))
    assert (decision.desired_replicas, decision.limit) == (3, "TooFewReplicas")
    assert "limited to minReplicas 3" in decision.message


@pytest.mark.parametrize(
    ("current", "desired", "limit"), [(9, 7, "TooManyReplicas"), (1, 3, "TooFewReplicas")]
)
def test_a_count_outside_the_bounds_is_brought_back_without_a_forecast(
    current: int, desired: int, limit: str
) -> None:
    fake = FakeForecaster(upper=[40.0])
    decision = run(spec(min_replicas=3, max_replicas=7), [40.0], current, fake)
    assert (decision.desired_replicas, decision.limit) == (desired, limit)
    counted = "1 replica" if current == 1 else f"{current} replicas"
    assert f"{counted} is outside [3, 7]" in decision.message
    assert fake.calls == []


def test_a_target_scaled_to_zero_stays_at_zero() -> None:
    fake = FakeForecaster(upper=[400.0])
    state = ScalingState()
    for now in (600.0, 660.0):
        decision = run(spec(), [400.0], 0, fake, state=state, now=now)
        assert (decision.desired_replicas, decision.held) == (0, "ScalingDisabled")
        assert "scaled to zero" in decision.message
        assert decision.state is state
    assert fake.calls == []


# --- state and spec -----------------------------------------------------------------------


def test_state_round_trips_through_json() -> None:
    state = ScalingState(
        recommendations=(TimedValue(0.0, 3), TimedValue(60.0, 5)),
        scale_up_events=(TimedValue(60.0, 2),),
        scale_down_events=(TimedValue(30.5, 1),),
        last_scale_time=60.0,
    )
    data = state.to_json()
    text = json.dumps(data)  # plain JSON types only
    assert ScalingState.from_json(json.loads(text)) == state
    assert ScalingState.from_json(ScalingState().to_json()) == ScalingState()
    with pytest.raises(ValidationError):
        ScalingState.from_json({"recommendations": [{"time": "soon", "value": 3}]})


def test_decision_state_round_trips_through_json() -> None:
    decision = run(spec(), [20.0], 2, FakeForecaster(upper=[40.0]))
    assert ScalingState.from_json(decision.state.to_json()) == decision.state
    assert decision.state.recommendations == (TimedValue(600.0, 4),)


def test_spec_refuses_min_above_max_naming_both() -> None:
    with pytest.raises(
        ValidationError, match=r"minReplicas \(5\) must not exceed maxReplicas \(3\)"
    ):
        ScalingSpec(min_replicas=5, max_replicas=3, target_per_replica=1.0)


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"targetPerReplica": 0.0}, "targetPerReplica"),
        ({"targetPerReplica": math.inf}, "targetPerReplica"),
        ({"minReplicas": 0}, "minReplicas"),
        ({"interval": 1.0}, "interval"),
        ({"leadTimeSeconds": -1.0}, "leadTimeSeconds"),
    ],
)
def test_spec_refuses_bad_fields_naming_them(fields: dict[str, float], field: str) -> None:
    with pytest.raises(ValidationError, match=field):
        ScalingSpec.model_validate({"maxReplicas": 5, "targetPerReplica": 1.0, **fields})


# --- property: any input gives a count within the bounds ----------------------------------

LOADS = st.lists(
    st.one_of(
        st.floats(allow_nan=True, allow_infinity=True),
        st.floats(min_value=0.0, max_value=1e4),
        st.sampled_from([1e308, -1e308, math.inf, math.nan, 0.0]),
    ),
    min_size=1,
    max_size=40,
)


def naive_forecaster(history: LoadHistory, horizon: int, level: float) -> Forecast:
    return make_model("naive").fit(history.values).predict(horizon, level)


def brown_forecaster() -> Forecaster:
    selection = ScheduledSelection("brown")

    def forecast(history: LoadHistory, horizon: int, level: float) -> Forecast:
        recent = TimedSeries(history.values, history.step_seconds, history.end_time)
        return selection.forecast_series(recent, horizon, level, history.end_time)

    return forecast


@given(
    loads=LOADS,
    lowest=st.integers(1, 5),
    spread=st.integers(0, 30),
    position=st.floats(0.0, 1.0),
    target=st.floats(min_value=1e-3, max_value=1e3),
    use_brown=st.booleans(),
)
def test_any_series_gives_a_count_within_the_bounds(
    *,
    loads: list[float],
    lowest: int,
    spread: int,
    position: float,
    target: float,
    use_brown: bool,
) -> None:
    highest = lowest + spread
    current = lowest + round(position * spread)
    scaling = ScalingSpec(min_replicas=lowest, max_replicas=highest, target_per_replica=target)
    forecaster = brown_forecaster() if use_brown else naive_forecaster
    decision = run(scaling, loads, current, forecaster)
    assert isinstance(decision.desired_replicas, int)
    assert lowest <= decision.desired_replicas <= highest
    assert decision.desired_replicas != 0
    assert decision.reasons
    assert all(isinstance(reason, str) and reason for reason in decision.reasons)
