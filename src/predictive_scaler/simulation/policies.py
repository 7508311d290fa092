"""The three policies every backtest compares: ``predictive``, ``hpa`` and ``oracle``."""

from __future__ import annotations

import math

from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.scaling import (
    DEFAULT_BEHAVIOR,
    Behavior,
    ScalingSpec,
    ScalingState,
    decide,
)
from predictive_scaler.scaling.policy import Forecaster
from predictive_scaler.simulation.forecasts import history_before
from predictive_scaler.simulation.replay import ReplayConfig

# The HPA controller's default --horizontal-pod-autoscaler-tolerance.
HPA_TOLERANCE = 0.1
# The replay's workloads have no practical ceiling; the comparison is about timing.
UNBOUNDED_REPLICAS = 1_000_000


class HpaPolicy:
    """The reactive baseline: the autoscaling/v2 algorithm on the previous step's utilisation.

    As in the HPA controller: usage ratio over ready pods, a 10 % tolerance,
    starting (unready) pods counted at zero usage when scaling up, then the
    default ``behavior`` (the same engine the predictive policy uses).
    """

    name = "hpa"
    budget: float | None = None

    def __init__(
        self,
        config: ReplayConfig,
        utilisation: float,
        *,
        tolerance: float = HPA_TOLERANCE,
        behavior: Behavior | None = None,
        min_replicas: int = 1,
        max_replicas: int = UNBOUNDED_REPLICAS,
        state: ScalingState | None = None,
    ) -> None:
        self.config = config
        self.utilisation = utilisation
        self.tolerance = tolerance
        self.behavior = behavior or DEFAULT_BEHAVIOR
        self.min_replicas = min_replicas
        self.max_replicas = max_replicas
        # A shadow HPA resumes from the state it persisted; a replay starts afresh.
        self.state = state or ScalingState()

    def _proposal(self, last: float, replicas: int, ready: int) -> int:
        per_replica = self.config.capacity * self.utilisation
        ratio = last / (ready * per_replica)
        if replicas > ready and ratio > 1.0:
            # Scaling up while pods start: count them as idle, and hold if
            # that already brings the ratio within tolerance or below 1.
            with_starting = last / (replicas * per_replica)
            if with_starting < 1.0 or abs(1.0 - with_starting) <= self.tolerance:
                return replicas
            return max(replicas, math.ceil(with_starting * replicas))
        if abs(1.0 - ratio) <= self.tolerance:
            return replicas
        return math.ceil(ratio * ready)

    def decide(self, t: int, observed: FloatArray, replicas: int, ready_before: int) -> int:
        last = float(observed[-1])
        if not math.isfinite(last) or ready_before == 0:
            return replicas  # no metric this step: the HPA does nothing
        now = t * self.config.step_seconds
        proposal = self._proposal(last, replicas, ready_before)
        state = self.state
        desired = state.normalize(
            self.behavior,
            replicas,
            proposal,
            min_replicas=self.min_replicas,
            max_replicas=self.max_replicas,
            now=now,
        )[1].replicas
        state = state.with_recommendation(self.behavior, now, proposal)
        self.state = state.after_scale(self.behavior, now, replicas, desired)
        return desired


class OraclePolicy:
    """Knows the future: at step t holds ceil(max(L[t..t+S]) / (C * U)); never overloads."""

    name = "oracle"
    budget: float | None = None

    def __init__(self, load: FloatArray, config: ReplayConfig, utilisation: float) -> None:
        self.load = load
        self.config = config
        self.utilisation = utilisation

    def decide(self, t: int, observed: FloatArray, replicas: int, ready_before: int) -> int:
        return self.config.peak_need(
            self.load[t : t + self.config.startup_steps + 1], self.utilisation
        )


class PredictivePolicy:
    """The operator's policy: :func:`predictive_scaler.scaling.decide`, step by step.

    With ``budget``, replicas are sized from the capacity per replica and the
    overload budget (``utilisation`` then sets only the initial fleet, as for
    the other policies); without, from the target ``capacity * utilisation``
    at the interval's upper bound. ``behavior`` None is the predictive default.
    """

    name = "predictive"

    def __init__(
        self,
        config: ReplayConfig,
        utilisation: float,
        forecaster: Forecaster,
        *,
        history_steps: int,
        interval: float = 0.9,
        behavior: Behavior | None = None,
        budget: float | None = None,
    ) -> None:
        self.config = config
        self.utilisation = utilisation
        self.budget = budget
        self.forecaster = forecaster
        self.history_steps = history_steps
        sizing = (
            {"target_per_replica": config.capacity * utilisation}
            if budget is None
            else {"capacity_per_replica": config.capacity, "overload_budget": budget}
        )
        self.spec = ScalingSpec(
            min_replicas=1,
            max_replicas=UNBOUNDED_REPLICAS,
            lead_time_seconds=config.startup_steps * config.step_seconds,
            interval=interval,
            behavior=behavior,
            **sizing,
        )
        self.state = ScalingState()

    def decide(self, t: int, observed: FloatArray, replicas: int, ready_before: int) -> int:
        step = self.config.step_seconds
        history = history_before(observed, t, self.history_steps, step)
        now = t * step
        decision = decide(
            self.spec,
            history,
            replicas,
            self.state,
            now=now,
            forecaster=self.forecaster,
            ready_replicas=ready_before,
        )
        self.state = decision.state.after_scale(
            self.spec.effective_behavior, now, replicas, decision.desired_replicas
        )
        return decision.desired_replicas
