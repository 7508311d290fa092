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

import pytest

from predictive_scaler.simulation.hpa import (
    AverageValue,
    HpaController,
    Target,
    Tolerance,
    Utilization,
    metric_replicas,
)
from tests.unit.simulation.upstream_hpa import (
    DEFAULT,
    NOW,
    SCALE_DOWN,
    Pod,
    group,
    ready,
    seeded,
)

pytestmark = pytest.mark.unit

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


@pytest.mark.parametrize(
    ("target", "expected"),
    [(Utilization(50), 1000), (Utilization(300), 3000), (AverageValue(700), 700)],
)
def test_a_pod_without_a_metric_counts_in_full_on_a_scale_down(
    target: Target, expected: int
) -> None:
    """max(100 %, target) of its request for a Utilization, the target for an AverageValue."""
    assert target.fallback(1000) == expected
