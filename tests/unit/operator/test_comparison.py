"""The shadow HPA's spec, status, verdict and metrics as the operator shows them."""

from __future__ import annotations

import json

import numpy as np
import pytest
from prometheus_client import REGISTRY

from predictive_scaler.forecasting import Forecast
from predictive_scaler.operator import metrics
from predictive_scaler.operator.comparison import (
    comparison_status,
    publish,
    summary,
    window_figures,
    worse_message,
)
from predictive_scaler.operator.conditions import Observation, observed
from predictive_scaler.operator.persisted import previous_shadow
from predictive_scaler.operator.resource import PredictiveScalerSpec
from predictive_scaler.scaling import Decision, LoadHistory, ScalingState
from predictive_scaler.simulation.fallback import steered
from predictive_scaler.simulation.shadow import Observed, ShadowState, advance
from predictive_scaler.simulation.tallies import JUDGED, Cost, WindowFigures

SPEC = {
    "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
    "maxReplicas": 40,
    "metric": {"resource": "cpu", "targetPerReplica": "700m"},
    "forecast": {"step": "1m"},
    "scaling": {"leadTime": "150s"},
}


def test_the_shadow_hpa_targets_what_the_object_does_and_saturates_at_its_utilisation() -> None:
    shadow = PredictiveScalerSpec.from_body(SPEC).shadow_spec()
    assert shadow.target == pytest.approx(0.7)
    assert shadow.capacity == pytest.approx(1.0)  # 0.7 at the default 70 %
    assert shadow.startup_steps == 3  # 150 s of start-up in whole minutes
    # No behavior: the HPA a user who sets none runs (the controller's legacy path), not
    # the predictive default; a load per replica is an AverageValue target.
    assert shadow.behavior is None
    assert shadow.average_value
    given = {"scaleDown": {"stabilizationWindowSeconds": 60}}
    own = PredictiveScalerSpec.from_body({**SPEC, "scaling": {"behavior": given}}).shadow_spec()
    assert own.behavior is not None
    assert own.behavior.scale_down.stabilization_window_seconds == 60
    assert (shadow.min_replicas, shadow.max_replicas) == (1, 40)

    budgeted = PredictiveScalerSpec.from_body(
        {
            **SPEC,
            "metric": {"resource": "cpu", "capacityPerReplica": "2"},
            "comparison": {"hpaTargetUtilization": "50%"},
        }
    ).shadow_spec()
    assert budgeted.capacity == pytest.approx(2.0)
    assert budgeted.target == pytest.approx(1.0)
    assert not budgeted.average_value  # a capacity: a Utilization target


def test_a_utilisation_the_api_server_would_refuse_is_refused_here_too() -> None:
    with pytest.raises(ValueError, match="hpaTargetUtilization"):
        PredictiveScalerSpec.from_body({**SPEC, "comparison": {"hpaTargetUtilization": "150%"}})


def losing_shadow(steps: int = 120, *, ready: int = 9, replicas: int = 9) -> ShadowState:
    """A forecast that flaps between far too many and far too few replicas on a steady load."""
    spec = PredictiveScalerSpec.from_body(SPEC).shadow_spec()
    load = np.full(steps, 6.0)
    state = None
    for newest in range(1, steps):
        values = np.concatenate([np.full(200 - newest - 1, np.nan), load[: newest + 1]])
        history = LoadHistory(values, 60.0, 1_700_000_040.0 + 60.0 * newest)
        forecast = Forecast("gm11", np.full(4, 6.0), np.full(4, 5.0), np.full(4, 7.0), 0.9)
        desired = 30 if newest % 2 else 2
        state = advance(state, spec, Observed(history, replicas, ready, desired, forecast))
    assert state is not None
    return state


def test_before_any_load_is_counted_the_status_lists_no_window_of_zeros() -> None:
    state = losing_shadow(2)  # one observation: no step between two samples yet
    status = comparison_status(state, window_figures(state), dry_run=False)
    assert status["windows"] == []
    assert status["saved"] is None
    assert status["summary"] == "no load counted yet over the last 24h"


def test_status_shows_every_window_and_the_saving_of_the_day() -> None:
    state = losing_shadow()
    status = comparison_status(state, window_figures(state), dry_run=False)
    assert [w["window"] for w in status["windows"]] == ["1h", "24h", "7d"]
    day = status["windows"][1]
    # The workload ran 9 replicas; the HPA settles near 6 / 0.7 = 9 too, having
    # started from 9: nothing saved, nothing lost, on a steady load.
    assert day["predictive"]["replicaMinutes"] == 9 * day["minutes"]
    assert status["saved"] == day["saved"]
    assert status["summary"].startswith("over the last 24h")
    assert status["hpaReplicas"] == state.hpa_replicas
    assert day["forecastCoverage"] == 1.0
    assert day["forecastError"] == 0.0
    # The status survives its own JSON.
    again = previous_shadow({"shadowState": json.dumps(state.to_json())})
    assert again == state
    assert previous_shadow({"shadowState": "{broken"}) is None


def figures_of(predictive: Cost, hpa: Cost, minutes: float) -> WindowFigures:
    costs = {"predictive": predictive, "replayed": predictive, "hpa": hpa}
    return WindowFigures(JUDGED, minutes, costs, 0, None, None)


def test_the_summary_states_the_difference_and_shows_it_at_any_size() -> None:
    # A compressed demo's day: a few replica-minutes, 3 % apart.
    small = figures_of(Cost(25.3, 0.0), Cost(24.6, 0.25), 4.0)
    assert summary(small, dry_run=False) == (
        "over the last 24h (4 min): this workload ran 3% more replica-minutes than the"
        " shadow HPA (25.3 vs 24.6), with 0 vs 0.25 overload minutes"
    )
    level = figures_of(Cost(2.0, 0.0), Cost(2.0, 0.0), 1.0)
    assert summary(level, dry_run=False) == (
        "over the last 24h (1 min): this workload ran as many replica-minutes as the"
        " shadow HPA (2 vs 2), with 0 vs 0 overload minutes"
    )
    # A real day: whole minutes, thousands separated.
    large = figures_of(Cost(12_929.4, 3.0), Cost(9_930.2, 150.0), 1440.0)
    assert summary(large, dry_run=False) == (
        "over the last 24h (1,440 min): this workload ran 30% more replica-minutes than"
        " the shadow HPA (12,929 vs 9,930), with 3 vs 150 overload minutes"
    )


def test_a_dry_run_headlines_the_forecasts_decisions_not_what_something_else_ran() -> None:
    state = losing_shadow()
    day = comparison_status(state, window_figures(state), dry_run=True)["windows"][1]
    replayed, hpa = day["replayed"]["replicaMinutes"], day["hpa"]["replicaMinutes"]
    assert day["saved"] == f"{(replayed / hpa - 1) * 100:+.0f}%"


def test_losing_on_both_counts_turns_forecast_reliable_false_with_advice() -> None:
    state = losing_shadow()
    # Judged on the forecast's decisions replayed for a DryRun object, which
    # flapped; the workload itself ran a steady 9, as the shadow did.
    assert worse_message(state, dry_run=False) is None
    message = worse_message(state, dry_run=True)
    assert message is not None
    assert "replayed" in message
    assert "FollowHPA" not in message  # a DryRun object sets no replicas to follow with
    forecast = Forecast("gm11", np.full(2, 6.0), np.full(2, 5.0), np.full(2, 7.0), 0.9)
    decision = Decision(9, 9, ("x",), ScalingState(), forecast=forecast)
    seen = Observation(False, decision, 200, 200, "1m", None, "gm11", worse_than_reactive=message)
    reliable = next(c for c in observed(seen) if c.type == "ForecastReliable")
    assert (reliable.status, reliable.reason) == ("False", "WorseThanReactive")
    assert not reliable.healthy  # so its Event is a Warning
    assert worse_message(losing_shadow(steps=20), dry_run=True) is None  # too few steps


def test_a_workload_that_ran_dear_and_overloaded_is_worse_than_reactive() -> None:
    # 30 replicas of which 2 ready (pods slower than the lead time says):
    # dearer than the shadow HPA and overloaded where it was not.
    state = losing_shadow(ready=2, replicas=30)
    message = worse_message(state, dry_run=False)
    assert message is not None
    assert "this workload took" in message
    assert "FollowHPA" in message


def test_following_starts_afresh_and_ends_when_the_forecasts_own_decisions_win() -> None:
    # The workload lost, with pods slower than the lead time, but the forecast's
    # decisions, replayed with the lead time, did not: following the shadow
    # must stop once they have won over the judged number of steps since, and
    # not straight away, nor start again on the steps before it stopped.
    state = losing_shadow(ready=2, replicas=30)
    state = steered(state, follow=True, dry_run=False)
    assert state.following
    assert state.switched_at == state.consumed_until
    message = worse_message(state, dry_run=False)
    assert message is not None
    assert message.startswith("following the shadow HPA's replicas since")
    assert not steered(state, follow=False, dry_run=False).following
    assert not steered(state, follow=True, dry_run=True).following

    spec = PredictiveScalerSpec.from_body(SPEC).shadow_spec()
    history_end = state.consumed_until + 60.0
    steps = 0
    while state.following:
        values = np.full(200, 6.0)
        # Following, the workload runs the shadow's count, all ready; the
        # forecast keeps asking for 9, which does not overload.
        seen = Observed(LoadHistory(values, 60.0, history_end), 9, 9, 9)
        state = steered(advance(state, spec, seen), follow=True, dry_run=False)
        history_end += 60.0
        steps += 1
        assert steps < 200
    assert steps >= 60  # the judged number of steps since following began
    assert state.switched_at == state.consumed_until
    assert worse_message(state, dry_run=False) is None


def sample(name: str, labels: dict[str, str]) -> float | None:
    return REGISTRY.get_sample_value(name, labels)


def test_metrics_show_each_scaler_and_window_and_go_with_the_object() -> None:
    state = losing_shadow()
    publish("team", "web", state, window_figures(state))
    labels = {"namespace": "team", "name": "web"}
    day = comparison_status(state, window_figures(state), dry_run=False)["windows"][1]
    hpa = sample("predictive_scaler_replica_minutes", {**labels, "scaler": "hpa", "window": "24h"})
    assert hpa == pytest.approx(day["hpa"]["replicaMinutes"], abs=1e-3)
    assert sample("predictive_scaler_forecast_coverage", {**labels, "window": "1h"}) == 1.0
    shadow = sample("predictive_scaler_replicas", {**labels, "kind": "shadow_hpa"})
    assert shadow == state.hpa_replicas
    metrics.forget("team", "web")
    assert (
        sample("predictive_scaler_replica_minutes", {**labels, "scaler": "hpa", "window": "24h"})
        is None
    )
    assert sample("predictive_scaler_forecast_error", {**labels, "window": "7d"}) is None
