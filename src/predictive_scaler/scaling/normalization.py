"""What the HPA controller does with a ``behavior``: stabilise, then limit the rate, then clamp.

The arithmetic follows the HPA controller
(``pkg/controller/podautoscaler/horizontal.go``): the same rounding of
Percent policies, the same "period start" replica count, the same order
(stabilise the recommendation, then limit the rate, then clamp to min/max),
and its reason codes. The predictive path and the reactive baseline of the
replay simulator run this very code.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from enum import StrEnum

from predictive_scaler.scaling.behavior import Behavior, PolicyType, ScalingRules, SelectPolicy


@dataclass(frozen=True)
class TimedValue:
    """A recommendation (replicas) or a scale event (replicas changed) at a time in seconds."""

    time: float
    value: int


class LimitReason(StrEnum):
    """The HPA controller's reasons for the count a normalisation stage gave (the reasons
    of its AbleToScale and ScalingLimited conditions), which the operator's conditions use."""

    NOT_STABILIZED = "NotStabilized"
    SCALE_UP_STABILIZED = "ScaleUpStabilized"
    SCALE_DOWN_STABILIZED = "ScaleDownStabilized"
    SCALE_UP_LIMIT = "ScaleUpLimit"
    SCALE_DOWN_LIMIT = "ScaleDownLimit"
    TOO_MANY_REPLICAS = "TooManyReplicas"
    TOO_FEW_REPLICAS = "TooFewReplicas"
    DESIRED_WITHIN_RANGE = "DesiredWithinRange"


@dataclass(frozen=True)
class Limited:
    """The outcome of one stage of normalisation: replicas, and HPA's reason code and words."""

    replicas: int
    reason: LimitReason
    message: str


def stabilize(
    behavior: Behavior,
    recommendations: tuple[TimedValue, ...],
    current: int,
    desired: int,
    now: float,
) -> Limited:
    """Hold ``desired`` within what the windows' past recommendations allow.

    Scale up no further than the lowest recommendation inside the scale-up
    window, and down no further than the highest inside the scale-down
    window (``stabilizeRecommendationWithBehaviors``).
    """
    up_cutoff = now - behavior.scale_up.stabilization_window_seconds
    down_cutoff = now - behavior.scale_down.stabilization_window_seconds
    up = min([desired] + [r.value for r in recommendations if r.time > up_cutoff])
    down = max([desired] + [r.value for r in recommendations if r.time > down_cutoff])
    stabilized = min(max(current, up), down)
    if stabilized == desired:
        return Limited(
            desired, LimitReason.NOT_STABILIZED, "no earlier recommendation held it back"
        )
    if stabilized > desired:
        return Limited(
            stabilized,
            LimitReason.SCALE_DOWN_STABILIZED,
            f"held at {stabilized}, the highest recommendation in the last "
            f"{behavior.scale_down.stabilization_window_seconds}s scale-down window",
        )
    return Limited(
        stabilized,
        LimitReason.SCALE_UP_STABILIZED,
        f"held at {stabilized}, the lowest recommendation in the last "
        f"{behavior.scale_up.stabilization_window_seconds}s scale-up window",
    )


def _changed_within(period_seconds: int, events: tuple[TimedValue, ...], now: float) -> int:
    cutoff = now - period_seconds
    return sum(event.value for event in events if event.time > cutoff)


def _proposals(
    rules: ScalingRules,
    current: int,
    up_events: tuple[TimedValue, ...],
    down_events: tuple[TimedValue, ...],
    now: float,
    *,
    up: bool,
) -> list[int]:
    """Each policy's bound, from the replicas at the start of its period."""
    proposals = []
    for policy in rules.policies:
        period_start = (
            current
            - _changed_within(policy.period_seconds, up_events, now)
            + _changed_within(policy.period_seconds, down_events, now)
        )
        if policy.type is PolicyType.PODS:
            proposals.append(period_start + policy.value if up else period_start - policy.value)
        elif up:
            # Rounded up, or a small target could never grow by a percentage.
            proposals.append(math.ceil(period_start * (1 + policy.value / 100)))
        else:
            # Truncated like Go's int32(): the replicas removed round up.
            proposals.append(int(period_start * (1 - policy.value / 100)))
    return proposals


def policy_limit(
    rules: ScalingRules,
    current: int,
    up_events: tuple[TimedValue, ...],
    down_events: tuple[TimedValue, ...],
    now: float,
    *,
    up: bool,
) -> int:
    """The bound the policies set now: most replicas when ``up``, else fewest.

    As ``calculateScaleUpLimitWithScalingRules`` and
    ``calculateScaleDownLimitWithBehaviors``: ``Max`` picks the policy that
    allows the biggest change, ``Min`` the smallest, ``Disabled`` none.
    """
    if rules.select_policy is SelectPolicy.DISABLED:
        return current
    proposals = _proposals(rules, current, up_events, down_events, now, up=up)
    biggest_change = max if up else min
    smallest_change = min if up else max
    pick = smallest_change if rules.select_policy is SelectPolicy.MIN else biggest_change
    return pick(proposals)


scale_up_limit = functools.partial(policy_limit, up=True)
scale_down_limit = functools.partial(policy_limit, up=False)


def limit_rate(
    behavior: Behavior,
    current: int,
    desired: int,
    *,
    min_replicas: int,
    max_replicas: int,
    up_events: tuple[TimedValue, ...],
    down_events: tuple[TimedValue, ...],
    now: float,
) -> Limited:
    """Apply the Pods/Percent policies and min/max (``convertDesiredReplicasWithBehaviorRate``)."""
    if desired > current:
        limit = max(
            scale_up_limit(behavior.scale_up, current, up_events, down_events, now), current
        )
        if max_replicas > limit:
            allowed, reason, message = (
                limit,
                LimitReason.SCALE_UP_LIMIT,
                f"scale-up limited to {limit} by behavior.scaleUp policies",
            )
        else:
            allowed, reason, message = (
                max_replicas,
                LimitReason.TOO_MANY_REPLICAS,
                f"limited to maxReplicas {max_replicas}",
            )
        if desired > allowed:
            return Limited(allowed, reason, message)
    elif desired < current:
        limit = min(
            scale_down_limit(behavior.scale_down, current, up_events, down_events, now), current
        )
        if min_replicas < limit:
            allowed, reason, message = (
                limit,
                LimitReason.SCALE_DOWN_LIMIT,
                f"scale-down limited to {limit} by behavior.scaleDown policies",
            )
        else:
            allowed, reason, message = (
                min_replicas,
                LimitReason.TOO_FEW_REPLICAS,
                f"limited to minReplicas {min_replicas}",
            )
        if desired < allowed:
            return Limited(allowed, reason, message)
    return Limited(
        desired, LimitReason.DESIRED_WITHIN_RANGE, "the desired count is within the allowed range"
    )
