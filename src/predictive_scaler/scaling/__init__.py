"""Replica counts from forecasts: lead time, overload budget, reactive floor, HPA behavior.

Pure: plain values in, a :class:`Decision` with its reasons out. The operator,
the replay simulator and the benchmarks all call :func:`decide`.
"""

from predictive_scaler.scaling.behavior import (
    DEFAULT_BEHAVIOR,
    PREDICTIVE_BEHAVIOR,
    Behavior,
    ScalingPolicyRule,
    ScalingRules,
)
from predictive_scaler.scaling.budget import OverloadTracker
from predictive_scaler.scaling.normalization import LimitReason
from predictive_scaler.scaling.policy import (
    Decision,
    Forecaster,
    HoldReason,
    LoadHistory,
    decide,
    holding,
)
from predictive_scaler.scaling.spec import ScalingSpec
from predictive_scaler.scaling.state import ScalingState

__all__ = [
    "DEFAULT_BEHAVIOR",
    "PREDICTIVE_BEHAVIOR",
    "Behavior",
    "Decision",
    "Forecaster",
    "HoldReason",
    "LimitReason",
    "LoadHistory",
    "OverloadTracker",
    "ScalingPolicyRule",
    "ScalingRules",
    "ScalingSpec",
    "ScalingState",
    "decide",
    "holding",
]
