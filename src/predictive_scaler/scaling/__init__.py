"""Replica counts from forecasts: lead time, interval headroom, reactive floor, HPA behavior.

Pure: plain values in, a :class:`Decision` with its reasons out. The operator,
the replay simulator and the benchmarks all call :func:`decide`.
"""

from predictive_scaler.scaling.behavior import (
    DEFAULT_BEHAVIOR,
    Behavior,
    ScalingPolicyRule,
    ScalingRules,
)
from predictive_scaler.scaling.policy import Decision, Forecaster, LoadHistory, decide
from predictive_scaler.scaling.spec import ScalingSpec
from predictive_scaler.scaling.state import ScalingState

__all__ = [
    "DEFAULT_BEHAVIOR",
    "Behavior",
    "Decision",
    "Forecaster",
    "LoadHistory",
    "ScalingPolicyRule",
    "ScalingRules",
    "ScalingSpec",
    "ScalingState",
    "decide",
]
