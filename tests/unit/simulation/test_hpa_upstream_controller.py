"""The HPA controller's decisions (``horizontal_test.go``, v1.36.3) over :class:`HpaController`.

Conventions and the cases left out: see ``test_hpa_upstream_calculator.py``.
``horizontal_test.go`` runs its controller with a legacy scale-up limit factor
of 8 (its ``init()``), so these cases do too.
"""

from __future__ import annotations

from typing import Any

import pytest

from predictive_scaler.scaling import Behavior
from predictive_scaler.simulation.hpa import HpaController, Utilization
from tests.unit.simulation.upstream_hpa import (
    NOW,
    SCALE_DOWN,
    Pod,
    behavior,
    group,
    history,
    ready,
    seeded,
    unseeded,
)

pytestmark = pytest.mark.unit

UPSTREAM_TEST_SCALE_UP_LIMIT_FACTOR = 8.0

UP_700 = behavior(
    scale_up={
        "stabilizationWindowSeconds": 0,
        "policies": [{"type": "Percent", "value": 700, "periodSeconds": 60}],
    }
)

# (Go test, min, max, current, pods, target %, state, behavior, expected)
CONTROLLER: list[tuple[str, int, int, int, list[Pod], int, Any, Behavior | None, int]] = [
    ("TestScaleUp", 2, 6, 3, ready(300, 500, 700), 30, seeded, None, 5),
    (
        "TestScaleUpUnreadyLessScale",
        2,
        6,
        3,
        [(1000, 300, "U"), *ready(500, 700)],
        30,
        seeded,
        None,
        4,
    ),
    (
        "TestScaleUpUnreadyNoScale",
        2,
        6,
        3,
        [*ready(400), (1000, 500, "U"), (1000, 700, "U")],
        30,
        seeded,
        None,
        3,
    ),
    (
        "TestScaleUpIgnoresFailedPods",
        2,
        6,
        2,
        [*ready(500, 700), (1000, None, "F"), (1000, None, "F")],
        30,
        seeded,
        None,
        4,
    ),
    ("TestScaleDown", 2, 6, 5, SCALE_DOWN, 50, unseeded, None, 3),
    ("TestScaleDownStabilizeInitialSize", 2, 6, 5, SCALE_DOWN, 50, seeded, None, 5),
    (
        "TestScaleDownIncludeUnreadyPods",
        2,
        6,
        5,
        [*ready(100, 300, 500), (1000, 250, "U"), (1000, 250, "U")],
        50,
        unseeded,
        None,
        2,
    ),
    (
        "TestScaleDownIgnoresDeletionPods",
        2,
        6,
        5,
        [*SCALE_DOWN, (1000, None, "D"), (1000, None, "D")],
        50,
        unseeded,
        None,
        3,
    ),
    (
        "TestTolerance",
        1,
        5,
        3,
        [(900, 1010, ""), (1000, 1030, ""), (1100, 1020, "")],
        100,
        seeded,
        None,
        3,
    ),
    (
        "TestMinReplicas",
        2,
        5,
        3,
        [(900, 10, ""), (1000, 94, ""), (1100, 10, "")],
        90,
        unseeded,
        None,
        2,
    ),
    (
        "TestZeroMinReplicasDesiredZero",
        0,
        5,
        3,
        [(900, 0, ""), (1000, 0, ""), (1100, 0, "")],
        90,
        unseeded,
        None,
        0,
    ),
    (
        "TestMinReplicasDesiredZero",
        2,
        5,
        3,
        [(900, 0, ""), (1000, 0, ""), (1100, 0, "")],
        90,
        unseeded,
        None,
        2,
    ),
    ("TestZeroReplicas", 3, 5, 0, [], 90, seeded, None, 0),
    ("TestTooFewReplicas", 3, 5, 2, [], 90, seeded, None, 3),
    ("TestTooManyReplicas", 3, 5, 10, [], 90, seeded, None, 5),
    ("TestScaleUpRCImmediately", 2, 6, 1, ready(0, 0, 0, 0), 50, seeded, None, 2),
    (
        "TestScaleDownRCImmediately",
        2,
        5,
        6,
        [(900, 8000, ""), (1000, 9500, ""), (1100, 1000, "")],
        50,
        seeded,
        None,
        5,
    ),
    (
        "TestMaxReplicas",
        2,
        5,
        3,
        [(900, 8000, ""), (1000, 9500, ""), (1100, 1000, "")],
        90,
        seeded,
        None,
        5,
    ),
    (
        "TestMissingMetrics",
        2,
        6,
        4,
        [*ready(400, 94), (1000, None, ""), (1000, None, "")],
        100,
        unseeded,
        None,
        3,
    ),
    ("TestEventCreated", 1, 5, 1, [(200, 200, "")], 50, seeded, None, 2),
    ("TestEventNotCreated", 1, 5, 2, [(400, 200, "")] * 2, 50, seeded, None, 2),
    ("TestMissingReports", 1, 5, 4, [(200, 200, "")], 50, unseeded, None, 2),
    ("TestMoreReplicasThanSpecNoScale", 1, 8, 4, ready(*[500] * 5), 50, seeded, None, 4),
    (
        "TestStabilizeDownscale",
        1,
        5,
        4,
        [(100, 50, "")] * 3,
        100,
        history((10, 600.0), (4, 60.0)),
        None,
        4,
    ),
    (
        "TestComputedToleranceAlgImplementation (target 56)",
        0,
        1000,
        10,
        [(r, 150, "") for r in (400, 200, 310, 290, 302, 298, 300, 298, 300, 300)],
        56,
        unseeded,
        None,
        9,
    ),
    (
        "TestComputedToleranceAlgImplementation (target 55)",
        0,
        1000,
        10,
        [(r, 150, "") for r in (400, 200, 310, 290, 302, 298, 300, 298, 300, 300)],
        55,
        unseeded,
        None,
        10,
    ),
    (
        "TestAvoidUnnecessaryUpdates",
        2,
        6,
        2,
        [*ready(400), (1000, 500, "H"), (1000, 700, "H")],
        80,
        unseeded,
        None,
        2,
    ),
    (
        "TestScaleDownWithScalingRules",
        2,
        6,
        5,
        SCALE_DOWN,
        50,
        unseeded,
        behavior(
            scale_up={
                "stabilizationWindowSeconds": 30,
                "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}],
            }
        ),
        3,
    ),
    ("TestUpscaleCap", 1, 100, 3, ready(100, 200, 300, request=100), 10, seeded, UP_700, 24),
    (
        "TestUpscaleCapGreaterThanMaxReplicas",
        1,
        20,
        3,
        ready(100, 200, 300, request=100),
        10,
        seeded,
        UP_700,
        20,
    ),
    (
        "TestConfigurableTolerance/Scaling up because of a 1% configurable tolerance",
        1,
        5,
        3,
        [(900, 1010, ""), (1000, 1030, ""), (1100, 1020, "")],
        100,
        seeded,
        behavior(scale_up={"tolerance": "0.01"}),
        4,
    ),
    (
        "TestConfigurableTolerance/No scale-down because of a 90% configurable tolerance",
        1,
        5,
        3,
        ready(300, 300, 300),
        100,
        seeded,
        behavior(scale_down={"tolerance": "0.9"}),
        3,
    ),
    (
        "TestConfigurableTolerance/No scaling because of the large default tolerance",
        1,
        5,
        3,
        [(900, 1010, ""), (1000, 1030, ""), (1100, 1020, "")],
        100,
        seeded,
        None,
        3,
    ),
]


@pytest.mark.parametrize(
    ("low", "high", "current", "pods", "percent", "state", "rules", "expected"),
    [pytest.param(*case[1:], id=case[0]) for case in CONTROLLER],
)
def test_the_controller_decides_as_upstream(
    low: int,
    high: int,
    current: int,
    pods: list[Pod],
    percent: int,
    state: Any,
    rules: Behavior | None,
    expected: int,
) -> None:
    controller = HpaController(
        Utilization(percent),
        low,
        high,
        rules,
        scale_up_limit_factor=UPSTREAM_TEST_SCALE_UP_LIMIT_FACTOR,
    )
    desired, _ = controller.reconcile(state(current), current, group(pods), NOW)
    assert desired == expected
