"""Falling back to the shadow HPA: the verdict on the forecast, and following the shadow.

The shadow (:mod:`.shadow`) runs what the reactive HPA would have on the
object's own load; this weighs the forecast's figures against it over the
judged window, and, for objects that ask for it (``FollowHPA``), sets the
shadow's count instead of the forecast's until the forecast wins again. The
operator and the replay's predictive policy take the same path.
"""

from __future__ import annotations

import dataclasses
from enum import StrEnum

from predictive_scaler.scaling import Decision, LimitReason
from predictive_scaler.simulation.shadow import Observed, ShadowSpec, ShadowState, advance
from predictive_scaler.units import counted


class Fallback(StrEnum):
    """What losing to the shadow HPA on both counts does (comparison.whenWorseThanReactive)."""

    WARN = "Warn"  # a condition and an Event
    FOLLOW_HPA = "FollowHPA"  # and the shadow's count is followed until the forecast wins


def following_hpa(decision: Decision, state: ShadowState, spec: ShadowSpec) -> Decision:
    """``decision`` with the shadow HPA's count, for objects that fall back to it."""
    shadow = state.hpa_replicas
    desired = min(max(shadow, spec.min_replicas), spec.max_replicas)
    reason = f"following the shadow HPA's {counted(shadow, 'replica')} (WorseThanReactive)"
    limit = None
    if desired != shadow:
        limit = LimitReason.TOO_MANY_REPLICAS if shadow > desired else LimitReason.TOO_FEW_REPLICAS
        reason += f", limited to {desired}"
    return dataclasses.replace(
        decision, desired_replicas=desired, reasons=(reason,), limit=limit, held=None
    )


def judged_side(state: ShadowState, dry_run: bool) -> str:
    """Whose figures the verdict weighs.

    The workload as it ran, unless it ran nothing of the forecast's: a DryRun
    object, or one following the shadow, is judged on the forecast's decisions
    replayed.
    """
    return "replayed" if dry_run or state.following else "predictive"


def worse_than_reactive(state: ShadowState, side: str = "predictive") -> bool:
    """Whether ``side`` lost to the shadow on both counts over the judged window."""
    return state.tallies.judged(state.consumed_until).worse_than_reactive(state.step_seconds, side)


def steered(state: ShadowState, *, follow: bool, dry_run: bool) -> ShadowState:
    """Start following the shadow when the workload loses to it; stop once the forecast wins.

    Each switch starts the verdict afresh, so the steps before it cannot
    switch it straight back: the forecast's replayed decisions must win over
    the steps since it stopped acting, and the workload must lose again over
    the steps since it resumed.
    """
    if not follow or dry_run:
        return dataclasses.replace(state, following=False) if state.following else state
    figures = state.tallies.judged(state.consumed_until)
    if not figures.enough(state.step_seconds):
        return state
    worse = figures.worse_than_reactive(state.step_seconds, judged_side(state, dry_run))
    if worse == state.following:
        return state
    now = state.consumed_until
    return dataclasses.replace(
        state, following=worse, switched_at=now, tallies=state.tallies.counting_from(now)
    )


def judge_against_shadow(
    decision: Decision,
    shadow: ShadowState | None,
    spec: ShadowSpec,
    seen: Observed | None,
    *,
    fallback: Fallback,
    dry_run: bool,
) -> tuple[Decision, ShadowState | None]:
    """The shadow advanced over what ``seen`` read (None: no metrics this time) and steered,
    and the decision that then stands: the shadow HPA's count while the object follows it
    (``fallback`` FOLLOW_HPA).

    The one path of the fallback: the operator takes it on every evaluation, and
    the replay's predictive policy on every step when it is asked to follow.
    """
    if seen is not None:
        shadow = advance(shadow, spec, seen)
    if shadow is None:
        return decision, None
    shadow = steered(shadow, follow=fallback is Fallback.FOLLOW_HPA, dry_run=dry_run)
    if shadow.following and decision.forecast is not None and not decision.held:
        decision = following_hpa(decision, shadow, spec)
    return decision, shadow


__all__ = [
    "Fallback",
    "following_hpa",
    "judge_against_shadow",
    "judged_side",
    "steered",
    "worse_than_reactive",
]
