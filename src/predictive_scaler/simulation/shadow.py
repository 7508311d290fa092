"""The shadow HPA: what the reactive HPA would have run on the load an object really had.

The operator advances it on every evaluation with the samples it has just
read, through :class:`HpaPolicy` and the replay model's :class:`Fleet`
themselves, so a shadow fed a load in any number of pieces runs exactly what
:func:`replay` runs on the whole of it from the same first replicas. Its
state is a plain value the operator keeps in the object's status, so a
restart does not reset it.

Only settled samples are consumed: every one but the newest, which a scrape
still in flight may change (the histories re-read it next cycle).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import TypeAdapter

from predictive_scaler.forecasting.forecast import Forecast
from predictive_scaler.forecasting.metrics import naive_scale
from predictive_scaler.scaling import Behavior, Decision, LoadHistory, ScalingState
from predictive_scaler.simulation.policies import HpaPolicy
from predictive_scaler.simulation.replay import Fleet, ReplayConfig, overloaded
from predictive_scaler.simulation.tallies import JUDGED, WINDOWS, Scored, Sides, Tallies

# Forecast steps awaiting their actual load; more only after a pile-up of restarts.
MAX_PENDING = 256


@dataclass(frozen=True)
class ShadowSpec:
    """The HPA being shadowed, from the object's own spec."""

    # The load one replica serves (what "overloaded" means) and the HPA's target.
    capacity: float
    target: float
    step_seconds: float
    startup_steps: int
    min_replicas: int
    max_replicas: int
    behavior: Behavior

    def policy(self, state: ScalingState) -> HpaPolicy:
        config = ReplayConfig(self.capacity, self.startup_steps, self.step_seconds, start=1)
        return HpaPolicy(
            config,
            self.target / self.capacity,
            behavior=self.behavior,
            min_replicas=self.min_replicas,
            max_replicas=self.max_replicas,
            state=state,
        )


@dataclass(frozen=True)
class FleetState:
    """A :class:`Fleet` as a value: its ready replicas and the steps the others are ready at."""

    ready: int
    starting: tuple[int, ...] = ()

    @property
    def replicas(self) -> int:
        return self.ready + len(self.starting)

    def fleet(self) -> Fleet:
        fleet = Fleet(self.ready)
        fleet.ready_at.extend(float(t) for t in self.starting)
        return fleet

    @classmethod
    def of(cls, fleet: Fleet, t: int) -> FleetState:
        ready = fleet.ready(t)
        return cls(ready, tuple(int(at) for at in fleet.ready_at[ready:]))


@dataclass(frozen=True)
class PendingForecast:
    due: float
    mean: float
    lower: float
    upper: float
    scale: float


@dataclass(frozen=True)
class Observed:
    """What one evaluation read and decided, as the shadow needs it."""

    history: LoadHistory
    replicas: int
    ready: int
    # The forecast's own decision, before any fallback to the shadow.
    desired: int
    forecast: Forecast | None = None


@dataclass(frozen=True)
class ShadowState:
    since: float
    step_seconds: float
    # The newest sample consumed, and its load (None: missing).
    consumed_until: float
    last_load: float | None
    hpa: ScalingState
    hpa_fleet: FleetState
    hpa_ready: int
    replayed_fleet: FleetState
    last_desired: int
    forecast_issued: float | None = None
    pending: tuple[PendingForecast, ...] = ()
    tallies: Tallies = field(default_factory=Tallies)

    @property
    def hpa_replicas(self) -> int:
        return self.hpa_fleet.replicas

    def to_json(self) -> dict[str, Any]:
        return _ADAPTER.dump_python(self, mode="json")  # type: ignore[no-any-return]

    @classmethod
    def from_json(cls, data: object) -> ShadowState:
        """Read back what :meth:`to_json` wrote; raises pydantic's ValidationError on junk."""
        return _ADAPTER.validate_python(data)


_ADAPTER = TypeAdapter(ShadowState)


def _start(previous: ShadowState | None, spec: ShadowSpec, seen: Observed) -> ShadowState:
    """A shadow that takes over the workload as it runs now, at the newest settled sample."""
    history = seen.history
    replicas = min(max(seen.replicas, spec.min_replicas), spec.max_replicas)
    consumed = history.end_time - history.step_seconds
    last = float(history.values[-2]) if history.values.size >= 2 else math.nan
    return ShadowState(
        since=consumed if previous is None else previous.since,
        step_seconds=history.step_seconds,
        consumed_until=consumed,
        last_load=last if math.isfinite(last) else None,
        hpa=ScalingState(),
        hpa_fleet=FleetState(replicas),
        hpa_ready=replicas,
        replayed_fleet=FleetState(seen.replicas),
        last_desired=seen.desired,
        tallies=Tallies() if previous is None else previous.tallies,
    )


def _restarts(state: ShadowState, history: LoadHistory) -> bool:
    """A new step, or a gap longer than the history: the shadow cannot carry on from it."""
    first = history.end_time - (history.values.size - 1) * history.step_seconds
    return (
        not math.isclose(state.step_seconds, history.step_seconds)
        or state.consumed_until + state.step_seconds < first - 1e-6
    )


def advance(state: ShadowState | None, spec: ShadowSpec, seen: Observed) -> ShadowState:
    """The shadow after the settled samples of ``seen.history`` it has not consumed yet."""
    history, step = seen.history, seen.history.step_seconds
    if state is None or _restarts(state, history):
        return _issued(_start(state, spec, seen), seen)
    times = history.end_time - step * np.arange(history.values.size - 1, -1, -1)
    new = [i for i in range(history.values.size - 1) if times[i] > state.consumed_until + 1e-6]
    if not new:
        return _issued(state, seen)
    policy = spec.policy(state.hpa)
    hpa, replayed = state.hpa_fleet.fleet(), state.replayed_fleet.fleet()
    hpa_ready, last_load = state.hpa_ready, state.last_load
    pending, tallies = list(state.pending), state.tallies
    t = 0
    for index in new:
        t = round(times[index] / step)
        observed = np.array([math.nan if last_load is None else last_load])
        desired = policy.decide(t, observed, len(hpa), hpa_ready)
        hpa.scale_to(desired, t, spec.startup_steps)
        hpa_ready = hpa.ready(t)
        replayed.scale_to(state.last_desired, t, spec.startup_steps)
        load = float(history.values[index])
        ready = np.array([seen.ready, replayed.ready(t), hpa_ready])
        over = overloaded(np.full(3, load), ready, spec.capacity)
        sides = Sides(
            (seen.replicas, len(replayed), len(hpa)), (bool(over[0]), bool(over[1]), bool(over[2]))
        )
        scored, pending = _score(pending, float(times[index]), load, step)
        tallies = tallies.add(float(times[index]), step, sides, scored)
        last_load = load if math.isfinite(load) else None
    advanced = dataclasses.replace(
        state,
        consumed_until=float(times[new[-1]]),
        last_load=last_load,
        hpa=policy.state,
        hpa_fleet=FleetState.of(hpa, t),
        hpa_ready=hpa_ready,
        replayed_fleet=FleetState.of(replayed, t),
        last_desired=seen.desired,
        pending=tuple(pending),
        tallies=tallies,
    )
    return _issued(advanced, seen)


def _score(
    pending: list[PendingForecast], time: float, load: float, step: float
) -> tuple[Scored, list[PendingForecast]]:
    """Score the forecasts due at ``time``; drop them and any that fell due unseen."""
    due = [p for p in pending if abs(p.due - time) < step / 2]
    left = [p for p in pending if p.due > time + step / 2]
    if not math.isfinite(load) or not due:
        return Scored(), left
    error = sum(abs(load - p.mean) / p.scale for p in due)
    covered = sum(1 for p in due if p.lower <= load <= p.upper)
    return Scored(len(due), error, covered), left


def _issued(state: ShadowState, seen: Observed) -> ShadowState:
    """Remember the forecast of this evaluation, one per new sample, to score when due."""
    forecast, history = seen.forecast, seen.history
    state = dataclasses.replace(state, last_desired=seen.desired)
    if forecast is None or (
        state.forecast_issued is not None and history.end_time <= state.forecast_issued + 1e-6
    ):
        return state
    finite = history.values[np.isfinite(history.values)]
    scale = naive_scale(finite)
    step = history.step_seconds
    fresh = [
        PendingForecast(
            history.end_time + (k + 1) * step,
            float(forecast.mean[k]),
            float(forecast.lower[k]),
            float(forecast.upper[k]),
            scale,
        )
        for k in range(forecast.mean.size)
    ]
    pending = (*state.pending, *fresh)[-MAX_PENDING:]
    return dataclasses.replace(state, forecast_issued=history.end_time, pending=pending)


def following_hpa(decision: Decision, state: ShadowState, spec: ShadowSpec) -> Decision:
    """``decision`` with the shadow HPA's count, for objects that fall back to it."""
    reason = f"following the shadow HPA's {state.hpa_replicas} replicas (WorseThanReactive)"
    desired = min(max(state.hpa_replicas, spec.min_replicas), spec.max_replicas)
    return dataclasses.replace(
        decision, desired_replicas=desired, reasons=(reason,), limit=None, held=None
    )


def worse_than_reactive(state: ShadowState, side: str = "predictive") -> bool:
    """Whether ``side`` lost to the shadow on both counts over the judged window."""
    figures = state.tallies.figures(JUDGED, state.consumed_until)
    return figures.worse_than_reactive(state.step_seconds, side)


__all__ = [
    "WINDOWS",
    "FleetState",
    "Observed",
    "PendingForecast",
    "ShadowSpec",
    "ShadowState",
    "advance",
    "following_hpa",
    "worse_than_reactive",
]
