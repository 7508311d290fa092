"""What a decision must remember for the next one, as a plain value the caller persists."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import TypeAdapter

from predictive_scaler.scaling.behavior import Behavior
from predictive_scaler.scaling.budget import OverloadTracker
from predictive_scaler.scaling.normalization import Limited, TimedValue, limit_rate, stabilize


@dataclass(frozen=True)
class ScalingState:
    """Recommendation history, recent scale events, the last scale time (seconds), overloads.

    Only entries still inside a stabilisation window, a policy period or the
    overload window are kept, so the value stays small enough for an
    object's status.
    """

    recommendations: tuple[TimedValue, ...] = ()
    scale_up_events: tuple[TimedValue, ...] = ()
    scale_down_events: tuple[TimedValue, ...] = ()
    last_scale_time: float | None = None
    overload: OverloadTracker = field(default_factory=OverloadTracker)

    def normalize(
        self,
        behavior: Behavior,
        current: int,
        proposal: int,
        *,
        min_replicas: int,
        max_replicas: int,
        now: float,
    ) -> tuple[Limited, Limited]:
        """HPA normalisation of a proposal: (stabilised, then rate-limited and clamped)."""
        stable = stabilize(behavior, self.recommendations, current, proposal, now)
        rate = limit_rate(
            behavior,
            current,
            stable.replicas,
            min_replicas=min_replicas,
            max_replicas=max_replicas,
            up_events=self.scale_up_events,
            down_events=self.scale_down_events,
            now=now,
        )
        return stable, rate

    def with_recommendation(self, behavior: Behavior, now: float, replicas: int) -> ScalingState:
        window = max(
            behavior.scale_up.stabilization_window_seconds,
            behavior.scale_down.stabilization_window_seconds,
        )
        kept = tuple(r for r in self.recommendations if r.time > now - window)
        return replace(self, recommendations=(*kept, TimedValue(now, replicas)))

    def after_scale(self, behavior: Behavior, now: float, previous: int, new: int) -> ScalingState:
        """Record a scale that was carried out; call it only once the patch succeeded."""
        if new == previous:
            return self
        # Both limits count events of both directions (a period's start undoes
        # the scale-ups and scale-downs made within it), so an event is kept
        # while any policy's period, up or down, still covers it.
        period = max(behavior.scale_up.longest_period, behavior.scale_down.longest_period)
        up = tuple(e for e in self.scale_up_events if e.time > now - period)
        down = tuple(e for e in self.scale_down_events if e.time > now - period)
        if new > previous:
            up = (*up, TimedValue(now, new - previous))
        else:
            down = (*down, TimedValue(now, previous - new))
        return replace(self, scale_up_events=up, scale_down_events=down, last_scale_time=now)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready mapping, e.g. for a status field."""
        return _ADAPTER.dump_python(self, mode="json")  # type: ignore[no-any-return]

    @classmethod
    def from_json(cls, data: object) -> ScalingState:
        """Read back what :meth:`to_json` wrote; raises pydantic's ValidationError on junk."""
        return _ADAPTER.validate_python(data)


_ADAPTER = TypeAdapter(ScalingState)
