"""What the operator keeps in an object's status between evaluations, and how it reads it back.

An evaluation is stateless in the process: a restart, a failover or another
shard picks an object up from its status. Three fields carry what must
survive: the scaling state (past recommendations, scale events, the overload
budget's tracker), the shadow HPA, and a scale patched but not yet reported.
Each is a JSON string in status (the CRD keeps them opaque), written and read
here only: whatever is damaged reads back as "none", and the next
evaluations rebuild it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from predictive_scaler.scaling import Behavior, ScalingState
from predictive_scaler.simulation.shadow import ShadowState

SCALING_STATE = "scalingState"
SHADOW_STATE = "shadowState"
PENDING_SCALE = "pendingScale"


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _refuse_constant(word: str) -> Any:
    raise ValueError(f"{word} is not a value the operator writes")


def _loads(raw: str) -> Any:
    """JSON as the operator writes it: NaN and Infinity, which Python's JSON reads and no
    time or count may be, are damage (read as none), not a value to fail on later."""
    return json.loads(raw, parse_constant=_refuse_constant)


@dataclass(frozen=True)
class PendingScale:
    """A scale about to be patched, written to status first: a crash may come in between."""

    previous: int
    desired: int
    at: float

    def to_status(self) -> str:
        return json.dumps({"from": self.previous, "to": self.desired, "at": self.at})

    @classmethod
    def from_status(cls, status: Mapping[str, Any]) -> PendingScale | None:
        try:
            raw = _loads(status.get(PENDING_SCALE) or "null")
            return None if raw is None else cls(int(raw["from"]), int(raw["to"]), float(raw["at"]))
        except (ValueError, TypeError, KeyError):
            return None


def pending_scale_status(intent: PendingScale | None) -> dict[str, Any]:
    """The status patch that records ``intent``, or clears it (None: resolved)."""
    return {PENDING_SCALE: None if intent is None else intent.to_status()}


def scaling_state_status(state: ScalingState) -> dict[str, Any]:
    return {SCALING_STATE: _compact(state.to_json())}


def previous_scaling_state(status: Mapping[str, Any]) -> ScalingState:
    raw = status.get(SCALING_STATE)
    if not raw:
        return ScalingState()
    try:
        return ScalingState.from_json(_loads(raw))
    except (ValueError, TypeError):
        # A damaged state only forgets past recommendations; the next decisions rebuild it.
        return ScalingState()


def restored_scaling_state(
    status: Mapping[str, Any], replicas: int, behavior: Behavior
) -> ScalingState:
    """The scaling state the last evaluation left, with the scale it patched and did not live
    to record (the target holds the pending count): the cool-down starts from that patch,
    not from now, and not never."""
    state = previous_scaling_state(status)
    pending = PendingScale.from_status(status)
    if pending is not None and replicas == pending.desired:
        state = state.after_scale(behavior, pending.at, pending.previous, pending.desired)
    return state


def shadow_status(shadow: ShadowState) -> dict[str, Any]:
    return {SHADOW_STATE: _compact(shadow.to_json())}


def previous_shadow(status: Mapping[str, Any]) -> ShadowState | None:
    raw = status.get(SHADOW_STATE)
    if not raw:
        return None
    try:
        return ShadowState.from_json(_loads(raw))
    except (ValueError, TypeError, ValidationError):
        # A damaged shadow starts again from the workload as it runs now.
        return None
