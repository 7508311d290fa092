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
from typing import Annotated, Any

import numpy as np
from pydantic import Field, TypeAdapter

from predictive_scaler.forecasting.forecast import Forecast
from predictive_scaler.forecasting.metrics import naive_scale
from predictive_scaler.scaling import Behavior, LoadHistory, ScalingState
from predictive_scaler.simulation.hpa import HpaPolicy
from predictive_scaler.simulation.replay import Fleet, ReplayConfig, overloaded
from predictive_scaler.simulation.tallies import Scored, Sides, Tallies

# Forecasts awaiting their load: one per step of the lead time, and some to spare.
MAX_PENDING = 512


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
    behavior: Behavior | None  # None: an HPA without behavior (the legacy path)
    average_value: bool = False  # an AverageValue target, not a Utilization one

    def policy(self, state: ScalingState) -> HpaPolicy:
        config = ReplayConfig(self.capacity, self.startup_steps, self.step_seconds, start=1)
        return HpaPolicy(
            config,
            self.target / self.capacity,
            behavior=self.behavior,
            average_value=self.average_value,
            min_replicas=self.min_replicas,
            max_replicas=self.max_replicas,
            state=state,
        )


@dataclass(frozen=True)
class FleetState:
    """A :class:`Fleet` as a value: its ready replicas and the steps the others are ready at."""

    # Bounded, so a damaged shadowState fails when read (and reads as none), not later.
    ready: Annotated[int, Field(ge=0)]
    starting: tuple[Annotated[int, Field(ge=0)], ...] = ()

    @property
    def replicas(self) -> int:
        return self.ready + len(self.starting)

    def fleet(self) -> Fleet:
        fleet = Fleet(self.ready)
        for at in self.starting:
            fleet.starting(float(at), 1)
        return fleet

    @classmethod
    def of(cls, fleet: Fleet, t: int) -> FleetState:
        return cls(fleet.ready(t), tuple(int(at) for at in fleet.starting_at(t)))


@dataclass(frozen=True)
class PendingForecast:
    """The forecast for the step a decision's new pods must serve, awaiting its load."""

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
class Reading:
    """One evaluation's workload, and its decision, by the history's newest sample.

    The replicas it read served that sample (as :func:`decide` takes them);
    its decision serves the samples after it.
    """

    end: float
    replicas: int
    ready: int
    desired: int


@dataclass(frozen=True)
class ShadowState:
    since: float
    step_seconds: float
    # The newest sample consumed, and its load (None: missing).
    consumed_until: float
    last_load: float | None
    hpa_state: ScalingState
    hpa_fleet: FleetState
    hpa_ready: int
    replayed_fleet: FleetState
    # The evaluations whose readings the samples not yet consumed need.
    readings: tuple[Reading, ...]
    forecast_issued: float | None = None
    pending: tuple[PendingForecast, ...] = ()
    tallies: Tallies = field(default_factory=Tallies)
    # Setting the shadow's count instead of the forecast's (FollowHPA), since switched_at.
    following: bool = False
    switched_at: float | None = None

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


def _reading(seen: Observed) -> Reading:
    return Reading(seen.history.end_time, seen.replicas, seen.ready, seen.desired)


def _start(previous: ShadowState | None, spec: ShadowSpec, seen: Observed) -> ShadowState:
    """A shadow that takes over the workload as it runs now, at the newest settled sample."""
    history = seen.history
    replicas = min(max(seen.replicas, spec.min_replicas), spec.max_replicas)
    consumed = history.end_time - history.step_seconds
    last = float(history.values[-2]) if history.values.size >= 2 else math.nan
    since, tallies = consumed, Tallies()
    if previous is not None:
        # Never count a moment twice (a finer step may start before the last consumed).
        consumed = max(consumed, previous.consumed_until)
        since, tallies = previous.since, previous.tallies
    return ShadowState(
        since=since,
        step_seconds=history.step_seconds,
        consumed_until=consumed,
        last_load=last if math.isfinite(last) else None,
        hpa_state=ScalingState(),
        hpa_fleet=FleetState(replicas),
        hpa_ready=replicas,
        replayed_fleet=FleetState(seen.replicas),
        readings=(),
        tallies=tallies,
    )


def _restarts(state: ShadowState, history: LoadHistory) -> bool:
    """A new step, or a gap longer than the history: the shadow cannot carry on from it."""
    first = history.end_time - (history.values.size - 1) * history.step_seconds
    return (
        not math.isclose(state.step_seconds, history.step_seconds)
        or state.consumed_until + state.step_seconds < first - 1e-6
    )


def _latest(readings: tuple[Reading, ...], until: float) -> Reading | None:
    found = [r for r in readings if r.end <= until + 1e-6]
    return found[-1] if found else None


def advance(state: ShadowState | None, spec: ShadowSpec, seen: Observed) -> ShadowState:
    """The shadow after the settled samples of ``seen.history`` it has not consumed yet."""
    history, step = seen.history, seen.history.step_seconds
    if state is None or _restarts(state, history):
        return _recorded(_start(state, spec, seen), seen)
    times = history.end_time - step * np.arange(history.values.size - 1, -1, -1)
    new = [i for i in range(history.values.size - 1) if times[i] > state.consumed_until + 1e-6]
    if not new:
        return _recorded(state, seen)
    policy = spec.policy(state.hpa_state)
    hpa, replayed = state.hpa_fleet.fleet(), state.replayed_fleet.fleet()
    hpa_ready, last_load = state.hpa_ready, state.last_load
    pending, tallies = list(state.pending), state.tallies
    # A sample no earlier evaluation saw (the shadow's first) is charged with this one's.
    this_reading = _reading(seen)
    t = 0
    for index in new:
        time = float(times[index])
        t = round(time / step)
        observed = np.array([math.nan if last_load is None else last_load])
        desired = policy.decide(t, observed, len(hpa), hpa_ready)
        hpa.scale_to(desired, t, spec.startup_steps)
        hpa_ready = hpa.ready(t)
        # The forecast's decision that saw the sample before this one serves this one.
        decided = _latest(state.readings, time - step)
        if decided is not None:
            replayed.scale_to(decided.desired, t, spec.startup_steps)
        served = _latest(state.readings, time) or this_reading
        load = float(history.values[index])
        ready = np.array([served.ready, replayed.ready(t), hpa_ready])
        over = overloaded(np.full(3, load), ready, spec.capacity)
        sides = Sides(
            (served.replicas, len(replayed), len(hpa)),
            (bool(over[0]), bool(over[1]), bool(over[2])),
        )
        scored, pending = _score(pending, time, load, step)
        tallies = tallies.add(time, step, sides, scored)
        last_load = load if math.isfinite(load) else None
    advanced = dataclasses.replace(
        state,
        consumed_until=float(times[new[-1]]),
        last_load=last_load,
        hpa_state=policy.state,
        hpa_fleet=FleetState.of(hpa, t),
        hpa_ready=hpa_ready,
        replayed_fleet=FleetState.of(replayed, t),
        pending=tuple(pending),
        tallies=tallies,
    )
    return _recorded(advanced, seen)


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


def _recorded(state: ShadowState, seen: Observed) -> ShadowState:
    """Keep this evaluation's reading, and its forecast for the lead-time step, once a sample.

    Only the readings the samples still to come need are kept: those after
    the newest consumed sample, and the last one before it.
    """
    history, forecast = seen.history, seen.forecast
    reading = _reading(seen)
    earlier = [r for r in state.readings if r.end < reading.end - 1e-6]
    settled = [r for r in earlier if r.end <= state.consumed_until + 1e-6]
    readings = (*settled[-1:], *(r for r in earlier if r.end > state.consumed_until + 1e-6))
    state = dataclasses.replace(state, readings=(*readings, reading))
    if forecast is None or (
        state.forecast_issued is not None and history.end_time <= state.forecast_issued + 1e-6
    ):
        return state
    # Only the last step of the horizon: the one the pods started now must serve.
    # Every step of every forecast would keep h(h+1)/2 of them waiting.
    lead = forecast.mean.size - 1
    finite = history.values[np.isfinite(history.values)]
    due = PendingForecast(
        history.end_time + (lead + 1) * history.step_seconds,
        float(forecast.mean[lead]),
        float(forecast.lower[lead]),
        float(forecast.upper[lead]),
        naive_scale(finite),
    )
    pending = (*state.pending, due)[-MAX_PENDING:]
    return dataclasses.replace(state, forecast_issued=history.end_time, pending=pending)


__all__ = [
    "FleetState",
    "Observed",
    "PendingForecast",
    "Reading",
    "ShadowSpec",
    "ShadowState",
    "advance",
]
