"""The policies every backtest compares: ``predictive``, ``oracle`` and ``hpa`` (in :mod:`.hpa`)."""

from __future__ import annotations

from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.scaling import Behavior, ScalingSpec, ScalingState, decide
from predictive_scaler.scaling.policy import Forecaster
from predictive_scaler.simulation.fallback import Fallback, judge_against_shadow
from predictive_scaler.simulation.forecasts import history_before
from predictive_scaler.simulation.replay import UNBOUNDED_REPLICAS, ReplayConfig
from predictive_scaler.simulation.shadow import Observed, ShadowSpec, ShadowState
from predictive_scaler.simulation.sizing import SizingTally


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
    ``beyond_ceiling`` counts the overloaded steps from ``config.start`` on that
    the highest threshold would not have served either (:mod:`..scaling.budget`),
    as ``decide`` judges each sample at the next step (so not the last step's).
    With ``follow_hpa``, the HPA it describes is shadowed as the operator shadows
    it, and its count is followed while the policy loses to it on both counts
    (``comparison.whenWorseThanReactive: FollowHPA``); ``followed_steps`` counts
    those steps. ``sizing`` splits the replicas its scored decisions asked for
    (:mod:`..sizing`).
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
        follow_hpa: ShadowSpec | None = None,
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
        self.beyond_ceiling = 0
        self.follow_hpa = follow_hpa
        self.shadow: ShadowState | None = None
        self.followed_steps = 0
        self.sizing = SizingTally()

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
        if self.follow_hpa is not None:
            seen = Observed(
                history, replicas, ready_before, decision.desired_replicas, decision.forecast
            )
            decision, self.shadow = judge_against_shadow(
                decision,
                self.shadow,
                self.follow_hpa,
                seen,
                fallback=Fallback.FOLLOW_HPA,
                dry_run=False,
            )
            self.followed_steps += bool(self.shadow is not None and self.shadow.following)
        # The decision at t counts the sample of step t - 1.
        if t - 1 >= self.config.start:
            self.beyond_ceiling += decision.beyond_ceiling
        if t >= self.config.start:
            self.sizing = self.sizing.counting(self.spec, decision)
        self.state = decision.state.after_scale(
            self.spec.effective_behavior, now, replicas, decision.desired_replicas
        )
        return decision.desired_replicas
