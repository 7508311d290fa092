"""The HPA controller's own test cases, run over :mod:`predictive_scaler.simulation.hpa`.

Written from ``pkg/controller/podautoscaler/replica_calculator_test.go`` and
``horizontal_test.go`` of Kubernetes v1.36.3 (inputs and expected replicas;
each case is named by its Go test and sub-case). Conventions of those tests
carried over:

- Pods are (request, usage) in millicores with a flag: ``""`` ready, ``"U"``
  not ready, ``"H"`` CPU still initialising (a metric older than its
  readiness), ``"P"`` pending, ``"F"`` failed, ``"D"`` being deleted; usage
  ``None`` is a pod without a metric. ``horizontal_test.go`` splits request
  and usage over two containers with an integer ``/ 2``: the values below are
  the effective, even ones.
- ``horizontal_test.go`` runs its controller with a legacy scale-up limit
  factor of 8 (its ``init()``), not production's 2.
- A "seeded" HPA is one the controller has just met (its first recommendation
  is the current count); "unseeded" tests give it an empty, non-nil history,
  expressed here as one recommendation too old to count.

Cases the model cannot express, and why:

- several metrics in one HPA (TestScaleUpOneMetricInvalid, TestNoScaleDown*,
  TestNoBackoffUpscaleCMNoBackoffCpu, ...): a PredictiveScaler has one metric;
- Object and External metrics, selectors, AmbiguousSelector and other
  condition-only tests, events, monitoring, conflict retries: no counterpart;
- metrics of pods that do not exist (TestReplicaCalcSuperfluousMetrics,
  TestSuperfluousMetrics), container-level metrics, request computation and
  error strings: the model takes the pods already grouped, with their requests;
- scale to and from zero (``HPAScaleToZero``, alpha) and a per-HPA tolerance
  with its feature gate off (TestConfigurableTolerance's last case): the model
  is the default configuration of 1.36, gate on;
- the slots a recommendation or scale event reuses (the "stored length" of
  TestNormalizeDesiredReplicas*, TestStoreScaleEvents): the model drops what
  has aged out of every window instead, which decides the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from predictive_scaler.scaling import Behavior, ScalingState
from predictive_scaler.scaling.behavior import TimedValue, limit_rate, stabilize
from predictive_scaler.simulation.hpa import (
    AverageValue,
    HpaController,
    Pods,
    Target,
    Tolerance,
    Utilization,
    legacy_normalize,
    metric_replicas,
)

pytestmark = pytest.mark.unit

NOW = 100_000.0
UPSTREAM_TEST_SCALE_UP_LIMIT_FACTOR = 8.0

Pod = tuple[int, int | None, str]


def group(pods: Sequence[Pod], *, cpu: bool = True) -> Pods:
    """``groupPods``: what the controller makes of each pod (CPU readiness only for CPU)."""
    measured: list[tuple[int, int]] = []
    unready: list[int] = []
    missing: list[int] = []
    for request, usage, flags in pods:
        if "F" in flags or "D" in flags:
            continue
        if "P" in flags:
            unready.append(request)
        elif usage is None:
            missing.append(request)
        elif cpu and ("U" in flags or "H" in flags):
            unready.append(request)
        else:
            measured.append((usage, request))
    return Pods(tuple(measured), tuple(unready), tuple(missing))


def ready(*usages: int, request: int = 1000) -> list[Pod]:
    return [(request, usage, "") for usage in usages]


DEFAULT = Tolerance()
SCALE_DOWN = ready(100, 300, 500, 250, 250)

# (Go test, current replicas, pods, target %, tolerance (down, up), expected replicas)
REPLICA_CALCULATOR: list[tuple[str, int, list[Pod], int, Tolerance, int]] = [
    ("TestReplicaCalcScaleUp", 3, ready(300, 500, 700), 30, DEFAULT, 5),
    (
        "TestReplicaCalcScaleUpUnreadyLessScale",
        3,
        [(1000, 300, "U"), *ready(500, 700)],
        30,
        DEFAULT,
        4,
    ),
    (
        "TestReplicaCalcScaleUpHotCpuLessScale",
        3,
        [(1000, 300, "H"), *ready(500, 700)],
        30,
        DEFAULT,
        4,
    ),
    (
        "TestReplicaCalcScaleUpUnreadyNoScale",
        3,
        [*ready(400), (1000, 500, "U"), (1000, 700, "U")],
        30,
        DEFAULT,
        3,
    ),
    (
        "TestReplicaCalcScaleHotCpuNoScale",
        3,
        [*ready(400), (1000, 500, "UH"), (1000, 700, "UH")],
        30,
        DEFAULT,
        3,
    ),
    (
        "TestReplicaCalcScaleUpIgnoresFailedPods",
        2,
        [*ready(500, 700), (1000, None, "F"), (1000, None, "F")],
        30,
        DEFAULT,
        4,
    ),
    (
        "TestReplicaCalcScaleUpIgnoresDeletionPods",
        2,
        [*ready(500, 700), (1000, None, "DU"), (1000, None, "DU")],
        30,
        DEFAULT,
        4,
    ),
    ("TestReplicaCalcScaleDown", 5, SCALE_DOWN, 50, DEFAULT, 3),
    (
        "TestReplicaCalcScaleDownExcludeUnreadyPods",
        5,
        [*ready(100, 300, 500), (1000, 250, "U"), (1000, 250, "U")],
        50,
        DEFAULT,
        2,
    ),
    (
        "TestReplicaCalcScaleDownExcludeUnscheduledPods",
        5,
        [*ready(100), *[(1000, None, "PU")] * 4],
        50,
        DEFAULT,
        1,
    ),
    (
        "TestReplicaCalcScaleDownIgnoreHotCpuPods",
        5,
        [*ready(100, 300, 500), (1000, 250, "H"), (1000, 250, "H")],
        50,
        DEFAULT,
        2,
    ),
    (
        "TestReplicaCalcScaleDownIgnoresFailedPods",
        5,
        [*SCALE_DOWN, (1000, None, "FU"), (1000, None, "FU")],
        50,
        DEFAULT,
        3,
    ),
    (
        "TestReplicaCalcScaleDownIgnoresDeletionPods",
        5,
        [*SCALE_DOWN, (1000, None, "DU"), (1000, None, "DU")],
        50,
        DEFAULT,
        3,
    ),
    (
        "TestReplicaCalcTolerance",
        3,
        [(900, 1010, ""), (1000, 1030, ""), (1100, 1020, "")],
        100,
        DEFAULT,
        3,
    ),
    (
        "TestReplicaCalcConfigurableTolerance/Outside of a 0% tolerance",
        3,
        [(900, 909, ""), (1000, 1010, ""), (1100, 1111, "")],
        100,
        Tolerance(0.0, 0.0),
        4,
    ),
    (
        "TestReplicaCalcConfigurableTolerance/Within a 200% scale-up tolerance",
        3,
        [(900, 1890, ""), (1000, 1910, ""), (1100, 1900, "")],
        100,
        Tolerance(0.1, 2.0),
        3,
    ),
    (
        "TestReplicaCalcConfigurableTolerance/Outside 8% scale-up tolerance",
        3,
        [(900, 1100, ""), (1000, 1080, ""), (1100, 1090, "")],
        100,
        Tolerance(2.0, 0.08),
        4,
    ),
    (
        "TestReplicaCalcConfigurableTolerance/Within a 36% scale-down tolerance",
        3,
        [(900, 660, ""), (1000, 640, ""), (1100, 650, "")],
        100,
        Tolerance(0.36, 0.1),
        3,
    ),
    (
        "TestReplicaCalcConfigurableTolerance/Outside a 34% scale-down tolerance",
        3,
        [(900, 660, ""), (1000, 640, ""), (1100, 650, "")],
        100,
        Tolerance(0.34, 0.1),
        2,
    ),
    (
        "TestReplicaCalcMissingMetrics",
        4,
        [*ready(400, 95), (1000, None, ""), (1000, None, "")],
        100,
        DEFAULT,
        3,
    ),
    (
        "TestReplicaCalcMissingMetricsNoChangeEq",
        2,
        [*ready(1000), (1000, None, "")],
        100,
        DEFAULT,
        2,
    ),
    (
        "TestReplicaCalcMissingMetricsNoChangeGt",
        2,
        [*ready(1900), (1000, None, "")],
        100,
        DEFAULT,
        2,
    ),
    (
        "TestReplicaCalcMissingMetricsNoChangeLt",
        2,
        [*ready(600), (1000, None, "")],
        100,
        DEFAULT,
        2,
    ),
    (
        "TestReplicaCalcMissingMetricsUnreadyChange",
        3,
        [(1000, 100, "U"), *ready(450), (1000, None, "")],
        50,
        DEFAULT,
        3,
    ),
    (
        "TestReplicaCalcMissingMetricsHotCpuNoChange",
        3,
        [(1000, 100, "H"), *ready(450), (1000, None, "")],
        50,
        DEFAULT,
        3,
    ),
    (
        "TestReplicaCalcMissingMetricsUnreadyScaleUp",
        3,
        [(1000, 100, "U"), *ready(2000), (1000, None, "")],
        50,
        DEFAULT,
        4,
    ),
    (
        "TestReplicaCalcMissingMetricsHotCpuScaleUp",
        3,
        [(1000, 100, "UH"), *ready(2000), (1000, None, "")],
        50,
        DEFAULT,
        4,
    ),
    (
        "TestReplicaCalcMissingMetricsUnreadyScaleDown",
        4,
        [(1000, 100, "U"), *ready(100, 100), (1000, None, "")],
        50,
        DEFAULT,
        3,
    ),
    (
        "TestReplicaCalcMissingMetricsScaleDownTargetOver100",
        4,
        [(1000, 200, "U"), (1000, 100, ""), (2000, 100, ""), (2000, None, "")],
        300,
        DEFAULT,
        2,
    ),
    (
        "TestReplicaCalcDuringRollingUpdateWithMaxSurge",
        2,
        [*ready(100, 100), (1000, None, "")],
        50,
        DEFAULT,
        2,
    ),
    (
        "TestReplicaCalcComputedToleranceAlgImplementation (target 56)",
        10,
        [(r, 150, "") for r in (400, 200, 310, 290, 302, 298, 301, 299, 300, 300)],
        56,
        DEFAULT,
        9,
    ),
    (
        "TestReplicaCalcComputedToleranceAlgImplementation (target 55)",
        10,
        [(r, 150, "") for r in (400, 200, 310, 290, 302, 298, 301, 299, 300, 300)],
        55,
        DEFAULT,
        10,
    ),
    # Derived from the code, not Go tests: the integer percent and the inclusive band.
    ("boundary: 110.9 % of 100 % is 110, within", 1, ready(1109), 100, DEFAULT, 1),
    ("boundary: 111 % of 100 % is outside", 1, ready(1110), 100, DEFAULT, 2),
    ("boundary: 89 % of 100 % is outside", 10, ready(*[899] * 10), 100, DEFAULT, 9),
    ("boundary: 90.9 % of 100 % is 90, within", 10, ready(*[909] * 10), 100, DEFAULT, 10),
    (
        "boundary: float ceil, 124/60*15 is 31.000000000000004",
        15,
        ready(*[1240] * 15),
        60,
        DEFAULT,
        32,
    ),
    ("boundary: 1 - 0.18 > 0.82 in floats", 10, ready(*[820] * 10), 100, Tolerance(0.18, 0.1), 9),
]


@pytest.mark.parametrize(
    ("current", "pods", "percent", "tolerance", "expected"),
    [pytest.param(*case[1:], id=case[0]) for case in REPLICA_CALCULATOR],
)
def test_the_replica_calculator_on_cpu_utilization(
    current: int, pods: list[Pod], percent: int, tolerance: Tolerance, expected: int
) -> None:
    assert metric_replicas(current, group(pods), Utilization(percent), tolerance) == expected


# Pods metrics: a mean value per pod; CPU readiness does not apply (only Pending is unready).
PODS_METRIC: list[tuple[str, int, list[Pod], int, Tolerance, int]] = [
    ("TestReplicaCalcScaleUpCM", 3, ready(20000, 10000, 30000), 15000, DEFAULT, 4),
    (
        "TestReplicaCalcScaleUpCMUnreadyHotCpuNoLessScale",
        3,
        [*ready(50000, 10000), (1000, 30000, "UH")],
        15000,
        DEFAULT,
        6,
    ),
    (
        "TestReplicaCalcScaleUpCMUnreadyHotCpuScaleWouldScaleDown",
        3,
        [(1000, 50000, "UH"), *ready(15000), (1000, 30000, "UH")],
        15000,
        DEFAULT,
        7,
    ),
    ("TestReplicaCalcScaleDownCM", 5, ready(*[12000] * 5), 20000, DEFAULT, 3),
    ("TestReplicaCalcToleranceCM", 3, ready(20000, 21000, 21000), 20000, DEFAULT, 3),
    (
        "TestReplicaCalcConfigurableToleranceCM",
        3,
        ready(20000, 21000, 21000),
        20000,
        Tolerance(0.1, 0.01),
        4,
    ),
    (
        "TestPlainMetricReplicaCalcMissingMetricsNoChangeEq",
        5,
        [*ready(20000, 19000, 21000), (1000, None, ""), (1000, None, "")],
        20000,
        DEFAULT,
        5,
    ),
    (
        "TestReplicaCalcDuringRollingUpdateWithMaxSurgeCM",
        2,
        [*ready(10000, 10000), (1000, None, "")],
        17000,
        DEFAULT,
        2,
    ),
]


@pytest.mark.parametrize(
    ("current", "pods", "value", "tolerance", "expected"),
    [pytest.param(*case[1:], id=case[0]) for case in PODS_METRIC],
)
def test_the_replica_calculator_on_an_average_value(
    current: int, pods: list[Pod], value: int, tolerance: Tolerance, expected: int
) -> None:
    grouped = group(pods, cpu=False)
    assert metric_replicas(current, grouped, AverageValue(value), tolerance) == expected


def test_no_metric_at_all_holds() -> None:
    """TestEmptyMetrics, TestReplicaCalcEmptyMetrics: an error, and no scale."""
    assert metric_replicas(4, group([(1000, None, "")] * 4), Utilization(100), DEFAULT) is None
    controller = HpaController(Utilization(100), 2, 6)
    assert controller.reconcile(seeded(4), 4, group([(1000, None, "")] * 4), NOW)[0] == 4


def seeded(current: int) -> ScalingState:
    """A new HPA: the controller records the current count before anything else."""
    del current
    return ScalingState()


def unseeded(current: int) -> ScalingState:
    """An empty, non-nil history: one recommendation older than any window."""
    return ScalingState(recommendations=(TimedValue(NOW - 86_400.0, current),))


def history(*recommendations: tuple[int, float]) -> Any:
    """A state whose recommendations are (value, age in seconds)."""

    def state(current: int) -> ScalingState:
        del current
        return ScalingState(tuple(TimedValue(NOW - age, value) for value, age in recommendations))

    return state


def behavior(**directions: dict[str, Any]) -> Behavior:
    return Behavior.model_validate(
        {
            key.replace("scale_up", "scaleUp").replace("scale_down", "scaleDown"): value
            for key, value in directions.items()
        }
    )


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


# TestNormalizeDesiredReplicas: (sub-case, recommendations (value, age), proposal, stabilised)
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


@pytest.mark.parametrize(
    ("target", "expected"),
    [(Utilization(50), 1000), (Utilization(300), 3000), (AverageValue(700), 700)],
)
def test_a_pod_without_a_metric_counts_in_full_on_a_scale_down(
    target: Target, expected: int
) -> None:
    """max(100 %, target) of its request for a Utilization, the target for an AverageValue."""
    assert target.fallback(1000) == expected
