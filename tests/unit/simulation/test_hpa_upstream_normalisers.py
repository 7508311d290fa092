"""The HPA's normalisers, legacy and ``behavior``, over the controller's own test cases.

From ``horizontal_test.go`` of Kubernetes v1.36.3: TestNormalizeDesiredReplicas,
TestConvertDesiredReplicasWithRules, TestNormalizeDesiredReplicasWithBehavior
and TestScalingWithRules. Conventions and the cases left out: see
``test_hpa_upstream_calculator.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from predictive_scaler.scaling import Behavior
from predictive_scaler.scaling.normalization import TimedValue, limit_rate, stabilize
from predictive_scaler.simulation.hpa import legacy_normalize
from tests.unit.simulation.upstream_hpa import NOW, behavior

pytestmark = pytest.mark.unit

LEGACY_STABILISATION = [
    ("empty log", [], 5, 5),
    ("stabilize", [(4, 120.0), (5, 60.0)], 3, 5),
    ("no stabilize", [(1, 120.0), (2, 60.0)], 3, 3),
    ("no stabilize - old recommendations", [(10, 600.0), (9, 540.0)], 3, 3),
    ("stabilize - old recommendations", [(10, 600.0), (4, 60.0), (5, 120.0), (9, 540.0)], 3, 5),
    # Derived: the legacy path keeps a recommendation exactly as old as its window.
    ("boundary: exactly 300 s old still counts", [(7, 300.0)], 3, 7),
]


@pytest.mark.parametrize(
    ("recommendations", "proposal", "expected"),
    [pytest.param(*case[1:], id=case[0]) for case in LEGACY_STABILISATION],
)
def test_the_legacy_path_holds_the_highest_recommendation_of_five_minutes(
    recommendations: list[tuple[int, float]], proposal: int, expected: int
) -> None:
    history_ = tuple(TimedValue(NOW - age, value) for value, age in recommendations)
    desired, kept = legacy_normalize(
        history_, 100, proposal, min_replicas=0, max_replicas=1000, now=NOW
    )
    assert desired == expected
    assert kept[-1] == TimedValue(NOW, proposal)  # the proposal is what is remembered


@pytest.mark.parametrize(
    ("current", "desired", "low", "high", "expected"),
    [
        pytest.param(5, 7, 3, 8, 7, id="DesiredWithinRange"),
        pytest.param(3, 1, 2, 8, 2, id="TooFewReplicas"),
        pytest.param(1, 0, 0, 10, 0, id="within range when minReplicas is 0"),
        pytest.param(20, 1000, 1, 10, 10, id="TooManyReplicas"),
        pytest.param(3, 1000, 1, 2000, 6, id="ScaleUpLimit (production factor 2)"),
        pytest.param(1, 1000, 1, 2000, 4, id="ScaleUpLimit minimum 4"),
    ],
)
def test_convert_desired_replicas_with_rules(
    current: int, desired: int, low: int, high: int, expected: int
) -> None:
    """TestConvertDesiredReplicasWithRules, at production's factor of 2."""
    result, _ = legacy_normalize((), current, desired, min_replicas=low, max_replicas=high, now=NOW)
    assert result == expected


def windows(up: int, down: int) -> Behavior:
    return behavior(
        scale_up={"stabilizationWindowSeconds": up},
        scale_down={"stabilizationWindowSeconds": down},
    )


# TestNormalizeDesiredReplicasWithBehavior: recommendations, current, proposal, windows, expected
BEHAVIOR_STABILISATION = [
    ("empty recommendations for scaling down", [], 100, 5, 0, 0, 5),
    ("simple scale down stabilization", [(4, 120.0), (5, 60.0)], 100, 3, 0, 180, 5),
    ("simple scale up stabilization", [(4, 120.0), (5, 60.0)], 1, 7, 300, 0, 4),
    ("no scale down stabilization", [(1, 120.0), (2, 60.0)], 100, 3, 300, 0, 3),
    ("no scale up stabilization", [(4, 120.0), (5, 60.0)], 1, 3, 0, 300, 3),
    (
        "no scale down stabilization, reuse recommendation element",
        [(10, 600.0), (9, 540.0)],
        100,
        3,
        0,
        0,
        3,
    ),
    (
        "no scale up stabilization, reuse recommendation element",
        [(10, 600.0), (9, 540.0)],
        1,
        100,
        0,
        0,
        100,
    ),
    (
        "scale down stabilization, reuse one of obsolete recommendation element",
        [(10, 600.0), (4, 60.0), (5, 120.0), (9, 540.0)],
        100,
        3,
        0,
        180,
        5,
    ),
    (
        "scale up stabilization, reuse one of obsolete recommendation element",
        [(10, 6000.0), (6, 60.0), (5, 120.0), (9, 180.0)],
        1,
        100,
        300,
        0,
        5,
    ),
    (
        "scale up and down stabilization, do not scale up when prenormalized rec goes down",
        [(2, 6000.0), (3, 180.0)],
        2,
        1,
        300,
        300,
        2,
    ),
    (
        "scale up and down stabilization, do not scale down when prenormalized rec goes up",
        [(2, 6000.0), (1, 180.0)],
        2,
        3,
        300,
        300,
        2,
    ),
]


@pytest.mark.parametrize(
    ("recommendations", "current", "proposal", "up", "down", "expected"),
    [pytest.param(*case[1:], id=case[0]) for case in BEHAVIOR_STABILISATION],
)
def test_behavior_stabilisation(
    recommendations: list[tuple[int, float]],
    current: int,
    proposal: int,
    up: int,
    down: int,
    expected: int,
) -> None:
    history_ = tuple(TimedValue(NOW - age, value) for value, age in recommendations)
    assert stabilize(windows(up, down), history_, current, proposal, NOW).replicas == expected


def gen(
    pods: int, pods_period: int, percent: int, percent_period: int, window: int
) -> dict[str, Any]:
    """The Go test's ``generateScalingRules``: Max select, the policies whose value is set."""
    policies = []
    if pods:
        policies.append({"type": "Pods", "value": pods, "periodSeconds": pods_period})
    if percent:
        policies.append({"type": "Percent", "value": percent, "periodSeconds": percent_period})
    return {"stabilizationWindowSeconds": window, "selectPolicy": "Max", "policies": policies}


def events(changes: Sequence[int], ages: Sequence[float]) -> tuple[TimedValue, ...]:
    return tuple(TimedValue(NOW - age, change) for change, age in zip(changes, ages, strict=True))


THREE = (100.0, 60.0, 20.0)  # generateEventsUniformDistribution(3 events, 120)
FOUR = (105.0, 75.0, 45.0, 15.0)

# TestScalingWithRules: current, desired, min, max, up rules, down rules, up, down events, expected
SCALING_WITH_RULES: list[tuple[str, int, int, int, int, Any, Any, Any, Any, int]] = [
    ("prenormalized desired replicas within range", 5, 7, 3, 8, None, None, (), (), 7),
    ("prenormalized desired replicas < minReplicas", 3, 1, 2, 8, None, None, (), (), 2),
    ("within range when minReplicas is 0", 1, 0, 0, 10, None, None, (), (), 0),
    (
        "maxReplicas is the limit because maxReplicas < scaleUpLimit",
        20,
        1000,
        1,
        10,
        None,
        None,
        (),
        (),
        10,
    ),
    (
        "desired replica count is more than the maximum replica count",
        100,
        1000,
        100,
        150,
        None,
        None,
        (),
        (),
        150,
    ),
    (
        "scaleUpLimit is the limit ... with user policies",
        3,
        1000,
        1,
        2000,
        gen(0, 0, 1, 60, 0),
        None,
        (),
        (),
        4,
    ),
    ("scaleUp with default behavior", 10, 50, 1, 1000, None, None, (), (), 20),
    (
        "scaleUp with pods policy larger than percent policy",
        10,
        500,
        1,
        1000,
        gen(100, 60, 100, 60, 0),
        None,
        (),
        (),
        110,
    ),
    (
        "scaleUp with percent policy larger than pods policy",
        10,
        500,
        1,
        1000,
        gen(2, 60, 100, 60, 0),
        None,
        (),
        (),
        20,
    ),
    (
        "scaleUp with spec MaxReplicas limitation with large pod policy",
        10,
        50,
        1,
        1000,
        gen(100, 60, 0, 0, 0),
        None,
        (),
        (),
        50,
    ),
    ("scaleUp with pod policy limitation", 10, 50, 1, 1000, gen(30, 60, 0, 0, 0), None, (), (), 40),
    (
        "scaleUp with percent policy limitation",
        10,
        50,
        1,
        1000,
        gen(0, 0, 200, 60, 0),
        None,
        (),
        (),
        30,
    ),
    (
        "scaleDown with percent policy larger than pod policy",
        100,
        2,
        1,
        1000,
        None,
        gen(20, 60, 1, 60, 300),
        (),
        (),
        80,
    ),
    (
        "scaleDown with pod policy larger than percent policy",
        100,
        2,
        1,
        1000,
        None,
        gen(2, 60, 1, 60, 300),
        (),
        (),
        98,
    ),
    (
        "scaleDown with spec MinReplicas=nil limitation with large pod policy",
        10,
        0,
        1,
        1000,
        None,
        gen(100, 60, 0, 0, 300),
        (),
        (),
        1,
    ),
    (
        "scaleDown with spec MinReplicas limitation with large percent policy",
        10,
        2,
        5,
        1000,
        None,
        gen(0, 0, 100, 60, 300),
        (),
        (),
        5,
    ),
    (
        "scaleDown with pod policy limitation",
        10,
        2,
        1,
        1000,
        None,
        gen(5, 60, 0, 0, 300),
        (),
        (),
        5,
    ),
    (
        "scaleDown with percent policy limitation",
        10,
        5,
        1,
        1000,
        None,
        gen(0, 0, 50, 60, 300),
        (),
        (),
        5,
    ),
    (
        "scaleUp with spec MaxReplicas limitation with large pod policy and events",
        100,
        500,
        1,
        200,
        gen(300, 60, 0, 0, 0),
        None,
        events((1, 5, 9), THREE),
        (),
        200,
    ),
    (
        "scaleUp with currentReplicas limitation ... a lot of recent scale up events",
        100,
        500,
        1,
        1000,
        gen(5, 120, 0, 0, 0),
        None,
        events((1, 5, 9), THREE),
        (),
        100,
    ),
    (
        "scaleUp with pod policy and previous scale up events",
        100,
        500,
        1,
        1000,
        gen(150, 120, 0, 0, 0),
        None,
        events((1, 5, 9), THREE),
        (),
        235,
    ),
    (
        "scaleUp with percent policy and previous scale up events",
        100,
        500,
        1,
        1000,
        gen(0, 0, 200, 120, 0),
        None,
        events((1, 5, 9), THREE),
        (),
        255,
    ),
    (
        "scaleUp with percent policy and previous scale up and down events",
        6,
        24,
        1,
        1000,
        gen(0, 0, 300, 300, 0),
        None,
        events((4,), (60.0,)),
        events((2,), (60.0,)),
        16,
    ),
    (
        "scaleDown with default policy and previous events",
        10,
        5,
        1,
        1000,
        None,
        None,
        (),
        events((1, 5, 9), THREE),
        5,
    ),
    (
        "scaleDown with spec MinReplicas=nil limitation with large pod policy and previous events",
        100,
        0,
        1,
        1000,
        None,
        gen(115, 120, 0, 0, 300),
        (),
        events((1, 5, 9), THREE),
        1,
    ),
    (
        "scaleDown with pod policy limitation and previous events",
        100,
        2,
        1,
        1000,
        None,
        gen(5, 120, 0, 0, 300),
        (),
        events((1, 5, 9), THREE),
        100,
    ),
    (
        "scaleDown with percent policy limitation and previous events",
        100,
        0,
        1,
        1000,
        None,
        gen(0, 0, 50, 120, 300),
        (),
        events((2, 4, 6), THREE),
        56,
    ),
    (
        "scaleDown with percent policy and previous scale up and down events",
        10,
        1,
        1,
        1000,
        None,
        gen(0, 0, 50, 180, 0),
        events((2,), (60.0,)),
        events((4,), (60.0,)),
        6,
    ),
    (
        "scaleDown with previous events preventing further scale down",
        100,
        0,
        1,
        1000,
        None,
        gen(0, 0, 10, 120, 300),
        (),
        events((10, 10, 10), THREE),
        100,
    ),
    (
        "scaleDown with with previous events still allowing more scale down",
        10,
        5,
        1,
        1000,
        None,
        gen(0, 0, 1000, 120, 300),
        (),
        events((10, 10, 10), THREE),
        5,
    ),
    (
        "check 'outdated' flag for events for one behavior for up",
        100,
        200,
        1,
        1000,
        gen(1000, 60, 0, 0, 0),
        None,
        events((8, 12, 9, 11), FOUR),
        (),
        200,
    ),
    (
        "check that events were marked 'outdated' for two different policies "
        "in the behavior for down",
        100,
        5,
        1,
        1000,
        None,
        gen(1000, 30, 100, 60, 300),
        (),
        events((8, 12, 9, 11), FOUR),
        5,
    ),
]


@pytest.mark.parametrize(
    ("current", "desired", "low", "high", "up", "down", "ups", "downs", "expected"),
    [pytest.param(*case[1:], id=case[0]) for case in SCALING_WITH_RULES],
)
def test_scaling_with_rules(
    current: int,
    desired: int,
    low: int,
    high: int,
    up: Any,
    down: Any,
    ups: tuple[TimedValue, ...],
    downs: tuple[TimedValue, ...],
    expected: int,
) -> None:
    given = {key: value for key, value in (("scaleUp", up), ("scaleDown", down)) if value}
    limited = limit_rate(
        Behavior.model_validate(given),
        current,
        desired,
        min_replicas=low,
        max_replicas=high,
        up_events=ups,
        down_events=downs,
        now=NOW,
    )
    assert limited.replicas == expected
