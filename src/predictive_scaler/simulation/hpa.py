"""The reactive baseline: the HPA controller's decision, as kube-controller-manager makes it.

Followed line by line from ``pkg/controller/podautoscaler`` (Kubernetes 1.36:
``horizontal.go``, ``replica_calculator.go``, ``metrics/utilization.go``) and
checked against the cases of its own unit tests
(``tests/unit/simulation/test_hpa_upstream_*.py``):

- **The replica count** (``calcPlainMetricReplicas``): a ``Utilization``
  target compares an *integer* percentage, ``int(usage * 100 / requests)``,
  with the target; an ``AverageValue`` target the plain mean. The tolerance
  test is inclusive, ``1 - down <= ratio <= 1 + up``. Pods pending or not
  yet ready count at zero when the load would scale up and are left out
  otherwise; running pods with no metric count at zero on a scale-up and at
  ``max(100 %, target)`` (or the target value) on a scale-down; a recount
  that would change direction or fall within tolerance holds.
- **Normalisation.** An HPA with ``behavior`` takes its stabilisation
  windows and rate policies (the engine in :mod:`predictive_scaler.scaling`,
  which the predictive policy shares). One without, as ``kubectl autoscale``
  and autoscaling/v2 objects that leave it out make, takes the legacy path:
  the highest recommendation of the last 300 s (``>=`` the cut-off, in both
  directions), then at most ``max(2 x current, 4)``, then min/max.
- **Its first decisions.** A new HPA's recommendations start with the
  current count, so it cannot scale below it within its first scale-down
  window; a count outside ``[min, max]`` is brought inside before any metric
  is read, and a target at zero replicas is left alone (scaling from zero
  is behind the alpha gate ``HPAScaleToZero``, off by default).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.scaling import Behavior, ScalingState
from predictive_scaler.scaling.normalization import TimedValue
from predictive_scaler.simulation.replay import UNBOUNDED_REPLICAS, ReplayConfig

# kube-controller-manager's defaults.
DEFAULT_TOLERANCE = 0.1  # --horizontal-pod-autoscaler-tolerance
LEGACY_DOWNSCALE_WINDOW_SECONDS = 300  # --horizontal-pod-autoscaler-downscale-stabilization
SYNC_PERIOD_SECONDS = 15.0  # --horizontal-pod-autoscaler-sync-period
SCALE_UP_LIMIT_FACTOR = 2.0
SCALE_UP_LIMIT_MINIMUM = 4.0
# Load is handed to the controller's arithmetic in thousandths, as Kubernetes
# quantities reach it (millicores, milli-units of a custom metric).
MILLI = 1000


@dataclass(frozen=True)
class Tolerance:
    """How far the usage ratio may stray from 1 before the HPA acts, per direction."""

    scale_down: float = DEFAULT_TOLERANCE
    scale_up: float = DEFAULT_TOLERANCE

    def within(self, ratio: float) -> bool:
        return (1.0 - self.scale_down) <= ratio <= (1.0 + self.scale_up)

    @classmethod
    def of(cls, behavior: Behavior | None) -> Tolerance:
        """``behavior.scaleUp/scaleDown.tolerance`` where set (beta in 1.35), else the default."""
        if behavior is None:
            return cls()
        down, up = behavior.scale_down.tolerance, behavior.scale_up.tolerance
        return cls(
            DEFAULT_TOLERANCE if down is None else down, DEFAULT_TOLERANCE if up is None else up
        )


@dataclass(frozen=True)
class Pods:
    """The target's pods as the controller groups them, metrics and requests in milli-units.

    ``measured``: running and ready, with a metric, as (metric, request).
    ``unready``: requests of pods pending or not yet ready (or whose metric
    predates their readiness). ``missing``: requests of running pods with no
    metric. Failed and deleted pods are not listed (the controller ignores them).
    """

    measured: tuple[tuple[int, int], ...]
    unready: tuple[int, ...] = ()
    missing: tuple[int, ...] = ()


class Target(Protocol):
    """A metric target: how a set of (metric, request) pairs compares with it."""

    def ratio(self, metrics: Sequence[tuple[int, int]]) -> float: ...

    def fallback(self, request: int) -> int:
        """What a pod with no metric counts as when the load would scale down."""
        ...


@dataclass(frozen=True)
class Utilization:
    """A ``Utilization`` target: percent of the pods' requests (``GetResourceUtilizationRatio``)."""

    percent: int

    def ratio(self, metrics: Sequence[tuple[int, int]]) -> float:
        usage = sum(metric for metric, _ in metrics)
        requests = sum(request for _, request in metrics)
        if requests <= 0:
            raise ArithmeticError("no requests among the pods with metrics")
        # An integer percent, truncated as Go's int64 division and int32() truncate.
        return (usage * 100 // requests) / self.percent

    def fallback(self, request: int) -> int:
        return request * max(100, self.percent) // 100


@dataclass(frozen=True)
class AverageValue:
    """An ``AverageValue`` target, in milli-units per pod (``calcPlainMetricReplicas``)."""

    value: int

    def ratio(self, metrics: Sequence[tuple[int, int]]) -> float:
        # The mean in whole milli-units first (Go's int64 division), as GetMetricUsageRatio.
        return (sum(metric for metric, _ in metrics) // len(metrics)) / self.value

    def fallback(self, request: int) -> int:
        return self.value


def metric_replicas(current: int, pods: Pods, target: Target, tolerance: Tolerance) -> int | None:
    """The replicas one metric asks for (``calcPlainMetricReplicas``); None: no metrics, hold."""
    if not pods.measured:
        return None
    ratio = target.ratio(pods.measured)
    scale_up_with_unready = bool(pods.unready) and ratio > 1.0
    if not scale_up_with_unready and not pods.missing:
        if tolerance.within(ratio):
            return current
        return math.ceil(ratio * len(pods.measured))
    metrics = list(pods.measured)
    if ratio < 1.0:
        metrics += [(target.fallback(request), request) for request in pods.missing]
    elif ratio > 1.0:
        metrics += [(0, request) for request in pods.missing]
    if scale_up_with_unready:
        metrics += [(0, request) for request in pods.unready]
    recount = target.ratio(metrics)
    if tolerance.within(recount) or (ratio < 1.0 < recount) or (ratio > 1.0 > recount):
        return current  # too small a change, or one in the other direction
    replicas = math.ceil(recount * len(metrics))
    if (recount < 1.0 and replicas > current) or (recount > 1.0 and replicas < current):
        return current
    return replicas


def legacy_normalize(
    recommendations: tuple[TimedValue, ...],
    current: int,
    proposal: int,
    *,
    min_replicas: int,
    max_replicas: int,
    now: float,
    scale_up_limit_factor: float = SCALE_UP_LIMIT_FACTOR,
) -> tuple[int, tuple[TimedValue, ...]]:
    """``normalizeDesiredReplicas``, for an HPA without ``behavior``: (replicas, recommendations).

    The highest recommendation not older than the window (``stabilizeRecommendation``),
    then ``convertDesiredReplicasWithRules``. (The controller's own tests run
    with a ``scale_up_limit_factor`` of 8.)
    """
    cutoff = now - LEGACY_DOWNSCALE_WINDOW_SECONDS
    kept = tuple(r for r in recommendations if r.time >= cutoff)
    stabilized = max([proposal, *(r.value for r in kept)])
    scale_up_limit = int(max(scale_up_limit_factor * current, SCALE_UP_LIMIT_MINIMUM))
    allowed = min(max_replicas, scale_up_limit)
    desired = min_replicas if stabilized < min_replicas else min(stabilized, allowed)
    return desired, (*kept, TimedValue(now, proposal))


@dataclass(frozen=True)
class HpaController:
    """One HPA as the controller runs it: its target, bounds, tolerance and ``behavior``."""

    target: Target
    min_replicas: int = 1
    max_replicas: int = UNBOUNDED_REPLICAS
    behavior: Behavior | None = None  # None: the legacy path
    scale_up_limit_factor: float = SCALE_UP_LIMIT_FACTOR  # the legacy path's

    @property
    def tolerance(self) -> Tolerance:
        return Tolerance.of(self.behavior)

    def reconcile(
        self, state: ScalingState, current: int, pods: Pods, now: float
    ) -> tuple[int, ScalingState]:
        """One sync (``reconcileAutoscaler``): the replicas to run, and the state to keep."""
        if not state.recommendations:
            # A new HPA (or a restarted controller) remembers the current count first.
            state = replace(state, recommendations=(TimedValue(now, current),))
        if current == 0:
            return 0, state  # scaling is disabled while the target is at zero
        if current > self.max_replicas or current < self.min_replicas:
            desired = min(max(current, self.min_replicas), self.max_replicas)
            return desired, self._scaled(state, now, current, desired)
        proposal = metric_replicas(current, pods, self.target, self.tolerance)
        if proposal is None:
            return current, state
        if self.behavior is None:
            desired, recommendations = legacy_normalize(
                state.recommendations,
                current,
                proposal,
                min_replicas=self.min_replicas,
                max_replicas=self.max_replicas,
                now=now,
                scale_up_limit_factor=self.scale_up_limit_factor,
            )
            return desired, replace(state, recommendations=recommendations)
        desired = state.normalize(
            self.behavior,
            current,
            proposal,
            min_replicas=self.min_replicas,
            max_replicas=self.max_replicas,
            now=now,
        )[1].replicas
        state = state.with_recommendation(self.behavior, now, proposal)
        return desired, self._scaled(state, now, current, desired)

    def _scaled(self, state: ScalingState, now: float, current: int, desired: int) -> ScalingState:
        # Scale events feed only the behavior path's rate policies.
        if self.behavior is None:
            return state
        return state.after_scale(self.behavior, now, current, desired)


def replay_pods(load: float, ready: int, starting: int, capacity: float) -> Pods:
    """The replay's pods as the controller sees them: ready ones share the load equally.

    A replica's request is its capacity, in thousandths; starting replicas are
    pending or not yet ready. No pod runs without a metric in the replay.
    """
    usage = round(load / capacity * MILLI)
    share, extra = divmod(usage, ready) if ready else (0, 0)
    measured = tuple((share + (1 if i < extra else 0), MILLI) for i in range(ready))
    return Pods(measured, unready=(MILLI,) * starting)


class HpaPolicy:
    """The reactive baseline in the replay: :class:`HpaController` on the previous step's load.

    ``utilisation`` is the HPA's target as a share of a replica's capacity: a
    ``Utilization`` target by default (CPU at 70 %, say), an ``AverageValue``
    of ``utilisation * capacity`` per pod with ``average_value``. ``behavior``
    None is an HPA that leaves it out: the legacy path. Every replay starts a
    new HPA on the initial replicas; a shadow HPA resumes from ``state``.
    """

    name = "hpa"
    budget: float | None = None

    def __init__(
        self,
        config: ReplayConfig,
        utilisation: float,
        *,
        behavior: Behavior | None = None,
        average_value: bool = False,
        min_replicas: int = 1,
        max_replicas: int = UNBOUNDED_REPLICAS,
        state: ScalingState | None = None,
    ) -> None:
        self.config = config
        self.utilisation = utilisation
        target: Target = (
            AverageValue(round(utilisation * MILLI))
            if average_value
            else Utilization(round(utilisation * 100))
        )
        self.controller = HpaController(target, min_replicas, max_replicas, behavior)
        self.state = state or ScalingState()

    def decide(self, t: int, observed: FloatArray, replicas: int, ready_before: int) -> int:
        last = float(observed[-1])
        now = t * self.config.step_seconds
        if not math.isfinite(last):
            return replicas  # no metric this step: the HPA does nothing
        pods = replay_pods(last, ready_before, replicas - ready_before, self.config.capacity)
        desired, self.state = self.controller.reconcile(self.state, replicas, pods, now)
        return desired
