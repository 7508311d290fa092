"""Helpers for the HPA controller's own test cases (``test_hpa_upstream_*.py``).

The cases come from ``pkg/controller/podautoscaler/replica_calculator_test.go``
and ``horizontal_test.go`` of Kubernetes v1.36.3; the calculator's test module
says which conventions of theirs are carried over and which cases the model
cannot express.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from predictive_scaler.scaling import Behavior, ScalingState
from predictive_scaler.scaling.normalization import TimedValue
from predictive_scaler.simulation.hpa import Pods, Tolerance

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


def seeded(current: int) -> ScalingState:
    """A new HPA: the controller records the current count before anything else."""
    del current
    return ScalingState()


def unseeded(current: int) -> ScalingState:
    """An empty, non-nil history: one recommendation older than any window."""
    return ScalingState(recommendations=(TimedValue(NOW - 86_400.0, current),))


def history(*recommendations: tuple[int, float]) -> Callable[[int], ScalingState]:
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
