from __future__ import annotations

import numpy as np
import pytest

from predictive_scaler.forecasting import Forecast
from predictive_scaler.forecasting.known_seasons import SeasonKnowledge
from predictive_scaler.forecasting.seasons import DAY, WEEK
from predictive_scaler.operator.conditions import (
    LATE_CYCLES,
    Condition,
    Lateness,
    Observation,
    blocked,
    lateness_condition,
    may_act,
    merge,
    observed,
)
from predictive_scaler.operator.evaluation import transition_notes
from predictive_scaler.scaling import Decision, HoldReason, LimitReason, ScalingState

T0, T1 = "2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z"


def test_transition_time_moves_only_when_the_status_does() -> None:
    first, changed = merge([], [Condition("Ready", "True", "Evaluated", "a")], now=T0, generation=1)
    assert [c.type for c in changed] == ["Ready"]
    same, changed = merge(
        first, [Condition("Ready", "True", "Evaluated", "b")], now=T1, generation=2
    )
    assert changed == []
    assert same[0]["lastTransitionTime"] == T0
    assert same[0]["message"] == "b"
    assert same[0]["observedGeneration"] == 2
    flipped, changed = merge(same, [Condition("Ready", "False", "Gone", "c")], now=T1, generation=2)
    assert flipped[0]["lastTransitionTime"] == T1
    assert changed == [Condition("Ready", "False", "Gone", "c")]


def test_a_new_reason_with_the_same_status_is_a_change_worth_an_event() -> None:
    before, _ = merge(
        [], [Condition("MetricsAvailable", "False", "Unreachable", "")], now=T0, generation=1
    )
    _, changed = merge(
        before, [Condition("MetricsAvailable", "False", "MultipleSeries", "")], now=T1, generation=1
    )
    assert [c.reason for c in changed] == ["MultipleSeries"]


def test_bad_news_is_a_warning_and_limits_are_bad_news_when_true() -> None:
    assert Condition("Ready", "True", "Evaluated", "").healthy
    assert not Condition("Ready", "False", "TargetNotFound", "").healthy
    assert not Condition("ScalingLimited", "True", "ScaleUpLimit", "").healthy
    assert Condition("ScalingLimited", "False", "DesiredWithinRange", "").healthy
    # A scale-down held by its stabilisation window is the policy working: no Warning.
    assert Condition("ScalingLimited", "True", "ScaleDownStabilized", "").healthy


def test_a_blocked_object_is_not_ready_and_does_not_scale() -> None:
    by_type = {c.type: c for c in blocked("TargetNotFound", "Deployment/x not found")}
    assert by_type["Ready"].status == "False"
    assert by_type["ScalingActive"].status == "False"
    assert by_type["MetricsAvailable"].status == "Unknown"
    assert set(by_type) == {
        "Ready",
        "MetricsAvailable",
        "ForecastReliable",
        "ScalingActive",
        "ScalingLimited",
    }


def _seen(decision: Decision, **overrides: object) -> Observation:
    values: dict[str, object] = {
        "dry_run": False,
        "decision": decision,
        "samples": 21,
        "usable_samples": 21,
        "step": "2s",
        "metrics_error": None,
        "model": "holt",
    }
    values.update(overrides)
    return Observation(**values)  # type: ignore[arg-type]


def test_unreachable_prometheus_holds_and_says_why() -> None:
    held = Decision(
        3,
        3,
        ("holding 3 replicas: no load samples",),
        ScalingState(),
        held=HoldReason.MISSING_METRICS,
    )
    by_type = {c.type: c for c in observed(_seen(held, metrics_error=("Unreachable", "down")))}
    assert (by_type["MetricsAvailable"].status, by_type["MetricsAvailable"].reason) == (
        "False",
        "Unreachable",
    )
    assert (by_type["ScalingActive"].status, by_type["ScalingActive"].reason) == (
        "False",
        "Unreachable",
    )
    assert by_type["Ready"].reason == "Unreachable"


def test_dry_run_is_ready_but_not_scaling() -> None:
    decided = Decision(
        5, 3, ("5 replicas (from 3)",), ScalingState(), limit=LimitReason.SCALE_UP_LIMIT
    )
    by_type = {c.type: c for c in observed(_seen(decided, dry_run=True))}
    assert by_type["Ready"].status == "True"
    assert by_type["ScalingActive"].reason == "DryRun"
    assert (by_type["ScalingLimited"].status, by_type["ScalingLimited"].reason) == (
        "True",
        "ScaleUpLimit",
    )


def _forecast_decision() -> Decision:
    forecast = Forecast("holt", np.ones(2), np.zeros(2), np.full(2, 2.0), 0.9)
    return Decision(3, 3, ("3 replicas",), ScalingState(), forecast=forecast)


def test_a_cold_start_is_not_reliable_yet_and_says_how_much_history_it_lacks() -> None:
    learning = SeasonKnowledge((), 5 * 3600.0, DAY, 2 * DAY, False, cold=True)
    by_type = {c.type: c for c in observed(_seen(_forecast_decision(), seasons=learning))}
    reliable = by_type["ForecastReliable"]
    assert (reliable.status, reliable.reason) == ("False", "LearningSeasons")
    assert "5 h of the 2 days needed to learn the daily season" in reliable.message
    assert by_type["Ready"].status == "True"  # it still scales, on what it has


def test_once_the_day_is_known_the_forecast_is_reliable_and_says_which_season() -> None:
    known = SeasonKnowledge((DAY,), 3 * DAY, WEEK, 2 * WEEK, True)
    reliable = {c.type: c for c in observed(_seen(_forecast_decision(), seasons=known))}[
        "ForecastReliable"
    ]
    assert (reliable.status, reliable.reason) == ("True", "ModelSelected")
    assert "daily season in use" in reliable.message
    assert "3 days of the 14 days needed to learn the weekly season" in reliable.message


def test_a_long_history_that_cannot_be_read_is_reported_but_does_not_hold() -> None:
    seen = _seen(_forecast_decision(), long_history_error="Prometheus did not answer")
    by_type = {c.type: c for c in observed(seen)}
    assert by_type["ForecastReliable"].reason == "LongHistoryUnavailable"
    assert by_type["ScalingActive"].status == "True"


def test_evaluations_are_late_only_after_several_late_turns_and_say_why() -> None:
    once = lateness_condition(Lateness(9.0, 8.0, 10.0, LATE_CYCLES - 1, 0.2))
    queued = lateness_condition(Lateness(9.0, 8.0, 10.0, LATE_CYCLES, 0.2))
    own = lateness_condition(Lateness(9.0, 0.5, 10.0, LATE_CYCLES, 18.5))

    assert (once.status, once.reason) == ("False", "OnTime")
    assert (queued.status, queued.reason) == ("True", "QueueBacklog")
    assert "8.0 s of it waiting" in queued.message
    assert (own.status, own.reason) == ("True", "OwnCost")
    assert "takes 18.5 s" in own.message
    assert not own.healthy
    assert Lateness(5.1, 0.0, 10.0, 1, 0.0).late
    assert not Lateness(5.0, 0.0, 10.0, 0, 0.0).late


@pytest.mark.parametrize(
    ("ready", "acts"),
    [
        ({"type": "Ready", "status": "False", "reason": "QueryOutsideNamespace"}, False),
        ({"type": "Ready", "status": "False", "reason": "ConflictingAutoscaler"}, False),
        # Metrics failing for a while: the object still owns its workload.
        ({"type": "Ready", "status": "False", "reason": "Timeout"}, True),
        ({"type": "Ready", "status": "True", "reason": "Evaluated"}, True),
    ],
)
def test_a_blocked_object_cannot_act_on_its_workload(ready: dict[str, str], acts: bool) -> None:
    assert may_act([{"type": "MetricsAvailable", "status": "True"}, ready]) is acts
    # Not evaluated yet: it may yet be refused.
    assert may_act([]) is False


def test_one_cause_turning_several_conditions_is_one_event() -> None:
    healthy = [Condition("Ready", "True", "Evaluated", "ok")]
    before, _ = merge([], healthy, now=T0, generation=1)
    _, changed = merge(
        before, blocked("TargetNotFound", "Deployment/web not found"), now=T1, generation=1
    )
    assert len(changed) == 5
    (note,) = transition_notes(changed)
    assert (note.type, note.reason) == ("Warning", "TargetNotFound")
    assert note.message == (
        "Ready is False: Deployment/web not found (also MetricsAvailable Unknown, "
        "ForecastReliable Unknown, ScalingActive False, ScalingLimited False)"
    )
    # Causes of their own are Events of their own, each as healthy as its conditions.
    notes = transition_notes(
        [
            Condition("Ready", "True", "Evaluated", "ok"),
            Condition("ForecastReliable", "False", "LearningSeasons", "5 h of the 2 days"),
        ]
    )
    assert [(n.type, n.reason, n.message) for n in notes] == [
        ("Normal", "Evaluated", "Ready is True: ok"),
        ("Warning", "LearningSeasons", "ForecastReliable is False: 5 h of the 2 days"),
    ]
    # A Warning is said in the words of a condition that warns.
    (mixed,) = transition_notes(
        [
            Condition("ScalingActive", "True", "Cause", "scaling"),
            Condition("Ready", "False", "Cause", "not ready"),
        ]
    )
    assert (mixed.type, mixed.message) == (
        "Warning",
        "Ready is False: not ready (also ScalingActive True)",
    )
