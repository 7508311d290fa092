"""The replay model (design.md section 5): replicas, start-up delay and what they cost.

A policy decides at every step ``t`` from the load of steps ``0..t-1``; a
replica added at ``t`` costs from ``t`` and serves from ``t + startup``;
removals take starting replicas first, newest first. Step ``t`` is overloaded
when its load exceeds ready replicas times the capacity per replica.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.scaling.spec import ROUNDING
from predictive_scaler.simulation.elasticity import Elasticity, demand, elasticity

# Default capacity: the 99.9th percentile of the load needs this many replicas
# at 100 % utilisation.
PEAK_REPLICAS = 20
PEAK_PERCENTILE = 99.9
# The replay's workloads have no practical ceiling; the comparison is about timing.
UNBOUNDED_REPLICAS = 1_000_000


def default_capacity(load: FloatArray) -> float:
    """Load one replica serves per step at 100 % utilisation: p99.9 / 20."""
    finite = load[np.isfinite(load)]
    peak = float(np.percentile(finite, PEAK_PERCENTILE)) if finite.size else 0.0
    if peak <= 0.0:
        raise ValueError("the load has no positive values; capacity per replica is undefined")
    return peak / PEAK_REPLICAS


@dataclass(frozen=True)
class ReplayConfig:
    """The replay's physics: capacity per replica, start-up delay, step, first scored step."""

    capacity: float
    startup_steps: int
    step_seconds: float
    start: int

    def __post_init__(self) -> None:
        if self.capacity <= 0 or self.step_seconds <= 0:
            raise ValueError("capacity and step_seconds must be > 0")
        if self.startup_steps < 0 or self.start < 1:
            raise ValueError("startup_steps must be >= 0 and start >= 1")

    def peak_need(self, window: FloatArray, utilisation: float) -> int:
        """Replicas that carry the peak of ``window`` at ``utilisation`` (at least 1)."""
        finite = window[np.isfinite(window)]
        if finite.size == 0:
            return 1
        return max(1, math.ceil(float(finite.max()) / (self.capacity * utilisation) - ROUNDING))


class ReplayPolicy(Protocol):
    """A scaling policy as the replay drives it."""

    name: str
    utilisation: float
    # The overload budget the policy steers to, if it has one.
    budget: float | None

    def decide(self, t: int, observed: FloatArray, replicas: int, ready_before: int) -> int:
        """Replicas to run from step ``t``, seeing only ``observed`` = load[0..t-1].

        ``ready_before`` is how many replicas were ready during step ``t-1``.
        """
        ...


@dataclass(frozen=True)
class Outcome:
    """The four figures every scaling comparison reports, and the SPEC RG elasticity metrics."""

    overload_minutes: float
    replica_minutes: float
    scaling_actions: int
    unserved: float
    elasticity: Elasticity = field(default_factory=Elasticity)


@dataclass(frozen=True)
class ReplayResult:
    """Per-step replicas (ready and total, from ``config.start``) and the figures."""

    policy: str
    utilisation: float
    budget: float | None
    replicas: np.ndarray
    ready: np.ndarray
    outcome: Outcome


class Fleet:
    """Replicas in cohorts by the step they are ready at, oldest first: starting ones last.

    Cohorts, not one entry per replica: a load sample 10^12 times the
    capacity (a metric glitch in a trace) asks the unbounded backtest for
    10^12 replicas, which must cost a number, not the memory of a list.
    """

    def __init__(self, ready_replicas: int) -> None:
        self._ready_at: list[float] = [-math.inf]
        self._counts: list[int] = [ready_replicas]
        self._total = ready_replicas

    def __len__(self) -> int:
        return self._total

    def starting(self, at: float, replicas: int) -> None:
        """Add ``replicas`` that are ready at step ``at``, no earlier than those there are."""
        if replicas <= 0:
            return
        if at < self._ready_at[-1]:
            raise ValueError(f"replicas ready at {at} would start before the newest ones")
        if at == self._ready_at[-1]:
            self._counts[-1] += replicas
        else:
            self._ready_at.append(at)
            self._counts.append(replicas)
        self._total += replicas

    def scale_to(self, replicas: int, t: int, startup_steps: int) -> None:
        if replicas > self._total:
            self.starting(t + startup_steps, replicas - self._total)
            return
        excess = self._total - replicas  # starting replicas go first, newest first
        while excess > 0:
            taken = min(excess, self._counts[-1])
            self._counts[-1] -= taken
            excess -= taken
            if self._counts[-1] == 0 and len(self._counts) > 1:
                self._counts.pop()
                self._ready_at.pop()
        self._total = replicas

    def ready(self, t: int) -> int:
        # The cohorts ready by t merge into the first: later steps only ask later.
        count = bisect.bisect_right(self._ready_at, t)
        if count > 1:
            self._counts[:count] = [sum(self._counts[:count])]
            self._ready_at[:count] = [self._ready_at[count - 1]]
        return self._counts[0] if count else 0

    def starting_at(self, t: int) -> list[float]:
        """The step each replica not ready at ``t`` is ready at, one entry per replica."""
        cohorts = zip(self._ready_at, self._counts, strict=True)
        return [at for at, n in cohorts if at > t for _ in range(n)]


def initial_replicas(load: FloatArray, config: ReplayConfig, utilisation: float) -> int:
    """What every policy starts with: enough ready replicas for the first start-up period."""
    return config.peak_need(
        load[config.start : config.start + config.startup_steps + 1], utilisation
    )


def replay(
    load: FloatArray, policy: ReplayPolicy, config: ReplayConfig, *, initial: int | None = None
) -> ReplayResult:
    """Run ``policy`` over ``load`` from ``config.start`` and account for every step.

    ``initial`` ready replicas (default: :func:`initial_replicas`) run before the start.
    """
    if config.start >= load.size:
        raise ValueError(f"the trace has {load.size} steps; replay starts at step {config.start}")
    if initial is None:
        initial = initial_replicas(load, config, policy.utilisation)
    fleet = Fleet(initial)
    steps = load.size - config.start
    replicas = np.empty(steps, dtype=np.int64)
    ready = np.empty(steps, dtype=np.int64)
    ready_before = len(fleet)
    for index, t in enumerate(range(config.start, load.size)):
        desired = policy.decide(t, load[:t], len(fleet), ready_before)
        fleet.scale_to(max(0, desired), t, config.startup_steps)
        replicas[index] = len(fleet)
        ready[index] = ready_before = fleet.ready(t)
    return ReplayResult(
        policy.name,
        policy.utilisation,
        policy.budget,
        replicas,
        ready,
        account(load, replicas, ready, config, initial),
    )


def account(
    load: FloatArray, replicas: np.ndarray, ready: np.ndarray, config: ReplayConfig, initial: int
) -> Outcome:
    """The replay's figures; a missing load sample is neither overload nor unserved.

    A scaling action is a step whose replica count differs from the step
    before (the first step is compared with ``initial``).
    """
    shortfall = np.nan_to_num(load[config.start :], nan=0.0) - ready * config.capacity
    over = overloaded(load[config.start :], ready, config.capacity)
    minutes_per_step = config.step_seconds / 60.0
    previous = np.concatenate(([initial], replicas[:-1]))
    return Outcome(
        overload_minutes=float(np.count_nonzero(over) * minutes_per_step),
        replica_minutes=float(replicas.sum() * minutes_per_step),
        scaling_actions=int(np.count_nonzero(replicas != previous)),
        unserved=float(shortfall[over].sum()),
        elasticity=elasticity(
            demand(load[config.start :], config.capacity),
            ready,
            np.full(ready.size, config.step_seconds),
        ),
    )


def overloaded(load: FloatArray, ready: np.ndarray, capacity: float) -> np.ndarray:
    """Steps whose load exceeds what their ready replicas serve; a missing sample is not one.

    The sizing's rounding sliver is forgiven, or a policy sized exactly for
    the load would "overload" by a floating-point error.
    """
    shortfall = np.nan_to_num(load, nan=0.0) - ready * capacity
    return np.asarray(shortfall > ROUNDING * capacity)
