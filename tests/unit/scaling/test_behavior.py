"""The HPA ``behavior`` engine against the Kubernetes documentation and controller.

References: "Configurable scaling behavior" in
https://kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale/
and ``pkg/controller/podautoscaler/horizontal.go`` (stabilizeRecommendationWithBehaviors,
calculateScaleUpLimitWithScalingRules, calculateScaleDownLimitWithBehaviors,
convertDesiredReplicasWithBehaviorRate, getReplicasChangePerPeriod).
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from predictive_scaler.scaling import Behavior, ScalingState
from predictive_scaler.scaling.behavior import PolicyType, SelectPolicy
from predictive_scaler.scaling.normalization import (
    TimedValue,
    limit_rate,
    scale_down_limit,
    scale_up_limit,
    stabilize,
)

DEFAULT = Behavior.model_validate({})


def behavior(data: dict[str, Any]) -> Behavior:
    return Behavior.model_validate(data)


# The documentation's "limit scale down rate" example: at most 4 pods or 10 % a minute,
# whichever removes more (selectPolicy defaults to Max).
DOCS_SCALE_DOWN = {
    "policies": [
        {"type": "Pods", "value": 4, "periodSeconds": 60},
        {"type": "Percent", "value": 10, "periodSeconds": 60},
    ]
}


# --- defaults ---------------------------------------------------------------------------


def test_default_behavior_is_autoscaling_v2s() -> None:
    up, down = DEFAULT.scale_up, DEFAULT.scale_down
    assert up.stabilization_window_seconds == 0
    assert up.select_policy is SelectPolicy.MAX
    assert {(p.type, p.value, p.period_seconds) for p in up.policies} == {
        (PolicyType.PERCENT, 100, 15),
        (PolicyType.PODS, 4, 15),
    }
    assert down.stabilization_window_seconds == 300
    assert down.select_policy is SelectPolicy.MAX
    assert [(p.type, p.value, p.period_seconds) for p in down.policies] == [
        (PolicyType.PERCENT, 100, 15)
    ]


@pytest.mark.parametrize(
    ("current", "limit"),
    [
        (1, 5),  # 4 pods beat doubling (2)
        (3, 7),  # 4 pods beat doubling (6)
        (4, 8),  # both give 8
        (10, 20),  # doubling beats 4 pods (14)
    ],
)
def test_default_scale_up_is_the_larger_of_4_pods_and_100_percent(current: int, limit: int) -> None:
    assert scale_up_limit(DEFAULT.scale_up, current, (), (), now=0.0) == limit


def test_default_scale_up_counts_the_scale_made_earlier_in_the_15s_period() -> None:
    # 10 -> 20 at t=0. Within the next 15 s the period started at 10 replicas, so
    # max(10 + 4, 2 * 10) = 20 is still the limit: no further growth.
    events = (TimedValue(0.0, 10),)
    assert scale_up_limit(DEFAULT.scale_up, 20, events, (), now=14.0) == 20
    limited = limit_rate(
        DEFAULT,
        20,
        35,
        min_replicas=1,
        max_replicas=100,
        up_events=events,
        down_events=(),
        now=14.0,
    )
    assert (limited.replicas, limited.reason) == (20, "ScaleUpLimit")
    # At t=15 the event is no longer after the cutoff (now - 15 s): the period starts at 20.
    assert scale_up_limit(DEFAULT.scale_up, 20, events, (), now=15.0) == 40
    allowed = limit_rate(
        DEFAULT,
        20,
        35,
        min_replicas=1,
        max_replicas=100,
        up_events=events,
        down_events=(),
        now=15.0,
    )
    assert (allowed.replicas, allowed.reason) == (35, "DesiredWithinRange")


def test_a_recent_scale_down_raises_the_period_start_for_scale_up() -> None:
    # 10 -> 5 at t=0; at t=5 the period started at 5 + 5 = 10 replicas: max(14, 20) = 20.
    assert scale_up_limit(DEFAULT.scale_up, 5, (), (TimedValue(0.0, 5),), now=5.0) == 20


def test_default_scale_down_waits_300s_for_the_highest_recommendation() -> None:
    recommendations = (TimedValue(0.0, 10), TimedValue(100.0, 8))
    held = stabilize(DEFAULT, recommendations, current=10, desired=3, now=250.0)
    assert (held.replicas, held.reason) == (10, "ScaleDownStabilized")
    assert "300s" in held.message
    # The recommendation at t=0 leaves the window at t=300 (not after the cutoff).
    assert stabilize(DEFAULT, recommendations, current=10, desired=3, now=300.0).replicas == 8
    # Both gone at t=400: the new recommendation stands.
    free = stabilize(DEFAULT, recommendations, current=10, desired=3, now=400.0)
    assert (free.replicas, free.reason) == (3, "NotStabilized")


def test_default_scale_down_policy_allows_removing_every_pod_down_to_min_replicas() -> None:
    # Percent 100 per 15 s: the policy allows 0, minReplicas is the bound.
    assert scale_down_limit(DEFAULT.scale_down, 10, (), (), now=0.0) == 0
    limited = limit_rate(
        DEFAULT, 10, 0, min_replicas=2, max_replicas=20, up_events=(), down_events=(), now=0.0
    )
    assert (limited.replicas, limited.reason) == (2, "TooFewReplicas")
    assert "minReplicas 2" in limited.message


def test_max_replicas_bounds_a_scale_up_the_policies_would_allow() -> None:
    limited = limit_rate(
        DEFAULT, 10, 50, min_replicas=1, max_replicas=15, up_events=(), down_events=(), now=0.0
    )
    assert (limited.replicas, limited.reason) == (15, "TooManyReplicas")
    assert "maxReplicas 15" in limited.message


def test_an_unchanged_count_is_within_range() -> None:
    limited = limit_rate(
        DEFAULT, 7, 7, min_replicas=1, max_replicas=10, up_events=(), down_events=(), now=0.0
    )
    assert (limited.replicas, limited.reason) == (7, "DesiredWithinRange")


# --- the documentation's scale-down example ---------------------------------------------


def test_docs_example_80_replicas_go_to_72_then_64() -> None:
    rules = behavior({"scaleDown": DOCS_SCALE_DOWN}).scale_down
    # First step: max change of (4 pods, 10 % of 80 = 8) is 8: 80 -> 72.
    assert scale_down_limit(rules, 80, (), (), now=0.0) == 72
    events = (TimedValue(0.0, 8),)
    # Still inside the 60 s period, it started at 80: no more than 72.
    assert scale_down_limit(rules, 72, (), events, now=59.0) == 72
    # Next period: "10% of 72 is 7.2, rounded up to 8" pods removed: 72 -> 64.
    assert scale_down_limit(rules, 72, (), events, now=60.0) == 64


def test_docs_example_through_limit_rate_with_a_target_of_10() -> None:
    docs = behavior({"scaleDown": {**DOCS_SCALE_DOWN, "stabilizationWindowSeconds": 0}})
    first = limit_rate(
        docs, 80, 10, min_replicas=1, max_replicas=100, up_events=(), down_events=(), now=0.0
    )
    assert (first.replicas, first.reason) == (72, "ScaleDownLimit")
    second = limit_rate(
        docs,
        72,
        10,
        min_replicas=1,
        max_replicas=100,
        up_events=(),
        down_events=(TimedValue(0.0, 8),),
        now=60.0,
    )
    assert second.replicas == 64


@pytest.mark.parametrize(
    ("current", "limit"),
    [
        (40, 36),  # 4 pods and 10 % agree
        (30, 26),  # "with 40 or less replicas, the first policy (Pods) is applied": 30 - 4
        (100, 90),  # the Percent policy removes more: 100 - 10
    ],
)
def test_docs_example_the_policy_allowing_the_most_change_wins(current: int, limit: int) -> None:
    rules = behavior({"scaleDown": DOCS_SCALE_DOWN}).scale_down
    assert scale_down_limit(rules, current, (), (), now=0.0) == limit


@pytest.mark.parametrize(("current", "limit"), [(80, 76), (30, 27)])
def test_select_policy_min_picks_the_smallest_change(current: int, limit: int) -> None:
    rules = behavior({"scaleDown": {**DOCS_SCALE_DOWN, "selectPolicy": "Min"}}).scale_down
    assert scale_down_limit(rules, current, (), (), now=0.0) == limit


def test_select_policy_min_on_scale_up() -> None:
    rules = behavior({"scaleUp": {"selectPolicy": "Min"}}).scale_up
    # Default scale-up policies, smaller change: min(10 + 4, 2 * 10) = 14.
    assert scale_up_limit(rules, 10, (), (), now=0.0) == 14


def test_select_policy_disabled_stops_that_direction_only() -> None:
    no_down = behavior({"scaleDown": {"selectPolicy": "Disabled"}})
    assert scale_down_limit(no_down.scale_down, 10, (), (), now=0.0) == 10
    held = limit_rate(
        no_down, 10, 2, min_replicas=1, max_replicas=20, up_events=(), down_events=(), now=0.0
    )
    assert held.replicas == 10
    grown = limit_rate(
        no_down, 10, 15, min_replicas=1, max_replicas=20, up_events=(), down_events=(), now=0.0
    )
    assert grown.replicas == 15

    no_up = behavior({"scaleUp": {"selectPolicy": "Disabled"}})
    assert scale_up_limit(no_up.scale_up, 10, (), (), now=0.0) == 10
    assert (
        limit_rate(
            no_up, 10, 15, min_replicas=1, max_replicas=20, up_events=(), down_events=(), now=0.0
        ).replicas
        == 10
    )


# --- stabilisation windows ----------------------------------------------------------------


def test_scale_up_stabilization_window_takes_the_lowest_recent_recommendation() -> None:
    slow_up = behavior({"scaleUp": {"stabilizationWindowSeconds": 60}})
    recommendations = (TimedValue(0.0, 5), TimedValue(30.0, 8))
    # At t=50 both are in the window: scale up no further than min(5, 8, 10) = 5.
    held = stabilize(slow_up, recommendations, current=4, desired=10, now=50.0)
    assert (held.replicas, held.reason) == (5, "ScaleUpStabilized")
    assert "60s scale-up window" in held.message
    # At t=60 the first has left: min(8, 10) = 8.
    assert stabilize(slow_up, recommendations, current=4, desired=10, now=60.0).replicas == 8
    # At t=90 neither is left.
    assert stabilize(slow_up, recommendations, current=4, desired=10, now=90.0).replicas == 10


def test_stabilization_never_moves_against_the_recommendation() -> None:
    # Scale-up window, lowest recommendation below current: hold current, do not scale down.
    slow_up = behavior({"scaleUp": {"stabilizationWindowSeconds": 60}})
    assert stabilize(slow_up, (TimedValue(0.0, 2),), current=4, desired=10, now=30.0).replicas == 4


# --- events inside and outside a period ---------------------------------------------------


def test_events_count_only_strictly_inside_each_policys_own_period() -> None:
    # Pods 2 per 30 s and Pods 5 per 120 s, Min: the 30 s policy forgets the +2 at t=0
    # before the 120 s one does.
    rules = behavior(
        {
            "scaleUp": {
                "selectPolicy": "Min",
                "policies": [
                    {"type": "Pods", "value": 2, "periodSeconds": 30},
                    {"type": "Pods", "value": 5, "periodSeconds": 120},
                ],
            }
        }
    ).scale_up
    events = (TimedValue(0.0, 2),)
    # t=10: both periods started at 10 - 2 = 8: min(8 + 2, 8 + 5) = 10.
    assert scale_up_limit(rules, 10, events, (), now=10.0) == 10
    # t=30: the 30 s period starts at 10 (event at the cutoff is out): min(12, 13) = 12.
    assert scale_up_limit(rules, 10, events, (), now=30.0) == 12
    # t=120: both periods start at 10: min(12, 15) = 12; with Max it would be 15.
    assert scale_up_limit(rules, 10, events, (), now=120.0) == 12


def test_state_keeps_scale_events_while_any_policy_period_can_count_them() -> None:
    # Scale up is limited per 60 s, scale down per 15 s. The controller counts scale-down
    # events in the scale-up period start too (getReplicasChangePerPeriod over both lists).
    rules = behavior(
        {
            "scaleUp": {"policies": [{"type": "Percent", "value": 100, "periodSeconds": 60}]},
            "scaleDown": {"stabilizationWindowSeconds": 0},
        }
    )
    state = ScalingState().after_scale(rules, 0.0, 10, 5)  # 10 -> 5 at t=0
    state = state.after_scale(rules, 20.0, 5, 10)  # 5 -> 10 at t=20
    # At t=40 the 60 s period started at 10 - 5 + 5 = 10 replicas: up to 20.
    limit = scale_up_limit(
        rules.scale_up, 10, state.scale_up_events, state.scale_down_events, now=40.0
    )
    assert limit == 20


def test_after_scale_records_direction_size_and_time() -> None:
    state = ScalingState().after_scale(DEFAULT, 10.0, 4, 9)
    assert state.scale_up_events == (TimedValue(10.0, 5),)
    assert state.scale_down_events == ()
    assert state.last_scale_time == 10.0
    state = state.after_scale(DEFAULT, 20.0, 9, 6)
    assert state.scale_down_events == (TimedValue(20.0, 3),)
    assert state.last_scale_time == 20.0
    # No change, no event.
    assert state.after_scale(DEFAULT, 30.0, 6, 6) is state
    # Events older than every period are dropped at the next scale.
    later = state.after_scale(DEFAULT, 100.0, 6, 7)
    assert later.scale_up_events == (TimedValue(100.0, 1),)
    assert later.scale_down_events == ()


def test_recommendations_are_kept_for_the_longest_window_only() -> None:
    state = ScalingState()
    for now, replicas in ((0.0, 5), (200.0, 6), (299.0, 7), (300.0, 8)):
        state = state.with_recommendation(DEFAULT, now, replicas)
    # At t=300 the 300 s window drops the recommendation made at t=0.
    assert state.recommendations == (
        TimedValue(200.0, 6),
        TimedValue(299.0, 7),
        TimedValue(300.0, 8),
    )


# --- validation ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "field", "words"),
    [
        (
            {"scaleDown": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 1801}]}},
            "scaleDown.policies.0.periodSeconds",
            "less than or equal to 1800",
        ),
        (
            {"scaleUp": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 0}]}},
            "scaleUp.policies.0.periodSeconds",
            "greater than 0",
        ),
        (
            {"scaleUp": {"policies": [{"type": "Pods", "value": 0, "periodSeconds": 60}]}},
            "scaleUp.policies.0.value",
            "greater than 0",
        ),
        (
            {"scaleUp": {"policies": [{"type": "Replicas", "value": 1, "periodSeconds": 60}]}},
            "scaleUp.policies.0.type",
            "'Pods' or 'Percent'",
        ),
        (
            {"scaleUp": {"policies": [{"type": "Pods", "value": 1}]}},
            "scaleUp.policies.0.periodSeconds",
            "Field required",
        ),
        ({"scaleUp": {"policies": []}}, "scaleUp.policies", "at least 1 item"),
        ({"scaleUp": {"selectPolicy": "Random"}}, "scaleUp.selectPolicy", "'Max', 'Min'"),
        (
            {"scaleDown": {"stabilizationWindowSeconds": 3601}},
            "scaleDown.stabilizationWindowSeconds",
            "less than or equal to 3600",
        ),
        (
            {"scaleDown": {"stabilizationWindowSeconds": -1}},
            "scaleDown.stabilizationWindowSeconds",
            "greater than or equal to 0",
        ),
        ({"scaleUp": {"tolerance": "5%"}}, "scaleUp.tolerance", "want a quantity"),
        ({"scaleDown": {"tolerance": -0.1}}, "scaleDown.tolerance", "greater than or equal"),
        ({"scaleUp": {"dither": 0.1}}, "scaleUp.dither", "Extra inputs"),
        ({"scaleSideways": {}}, "scaleSideways", "Extra inputs"),
    ],
)
def test_invalid_behavior_is_refused_naming_the_field(
    data: dict[str, Any], field: str, words: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        behavior(data)
    located = {
        ".".join(str(part) for part in error["loc"]): error["msg"]
        for error in caught.value.errors()
    }
    assert field in located, located
    assert words in located[field]
    assert field in str(caught.value)


# --- partial behavior ---------------------------------------------------------------------


def test_scale_down_with_only_a_window_keeps_the_default_policies() -> None:
    partial = behavior({"scaleDown": {"stabilizationWindowSeconds": 60}})
    assert partial.scale_down.stabilization_window_seconds == 60
    assert partial.scale_down.policies == DEFAULT.scale_down.policies
    assert partial.scale_down.select_policy is SelectPolicy.MAX
    assert partial.scale_up == DEFAULT.scale_up


def test_scale_up_with_only_policies_keeps_the_default_window_and_select_policy() -> None:
    partial = behavior(
        {"scaleUp": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}}
    )
    assert partial.scale_up.stabilization_window_seconds == 0
    assert partial.scale_up.select_policy is SelectPolicy.MAX
    assert [(p.type, p.value, p.period_seconds) for p in partial.scale_up.policies] == [
        (PolicyType.PODS, 1, 60)
    ]
    assert partial.scale_down == DEFAULT.scale_down


def test_snake_case_and_null_directions_are_accepted() -> None:
    snake = behavior({"scale_down": {"stabilization_window_seconds": 30}})
    assert snake.scale_down.stabilization_window_seconds == 30
    assert snake.scale_down.policies == DEFAULT.scale_down.policies
    assert behavior({"scaleUp": None, "scaleDown": None}) == DEFAULT


def test_behavior_round_trips_through_its_wire_form() -> None:
    original = behavior(
        {
            "scaleDown": {**DOCS_SCALE_DOWN, "selectPolicy": "Min"},
            "scaleUp": {"selectPolicy": "Disabled"},
        }
    )
    wire = original.model_dump(mode="json", by_alias=True)
    assert wire["scaleDown"]["policies"][1] == {"type": "Percent", "value": 10, "periodSeconds": 60}
    assert behavior(wire) == original
    with pytest.raises(ValidationError, match="frozen"):
        original.scale_up = DEFAULT.scale_up
