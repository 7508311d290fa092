"""``decide``: replicas for the forecast load, with the reasons in words.

One pure function serves the operator, ``predictive-scaler backtest`` and
the benchmarks, so the policy they measure is the policy that runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import StrEnum

import numpy as np

from predictive_scaler.forecasting import Forecast, ModelPendingError
from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.scaling.budget import HIGHEST, Ceiling, OverloadTracker, provisioned
from predictive_scaler.scaling.normalization import LimitReason
from predictive_scaler.scaling.spec import ROUNDING, ScalingSpec
from predictive_scaler.scaling.state import ScalingState
from predictive_scaler.units import counted, format_duration

# The newest sample may be this many steps old before the data counts as stale.
STALE_AFTER_STEPS = 3
# More missing samples than this share of the history and no forecast is trusted.
MAX_MISSING_SHARE = 0.5


def holding(replicas: int, why: str) -> str:
    """The decision's words when replicas are held for lack of usable load (here and in the
    operator, whose metric source can fail before a history exists)."""
    return f"holding {counted(replicas, 'replica')}: {why}"


class HoldReason(StrEnum):
    """Why a decision keeps the replicas it found (the reason of the condition saying so)."""

    MISSING_METRICS = "MissingMetrics"
    STALE_METRICS = "StaleMetrics"
    # No forecast this time: the replicas are held unless the current load needs more.
    SELECTING_MODEL = "SelectingModel"
    FORECAST_FAILED = "ForecastFailed"
    # The target was scaled to zero by hand: left alone, as the HPA leaves it.
    SCALING_DISABLED = "ScalingDisabled"


@dataclass(frozen=True)
class LoadHistory:
    """Load samples, oldest first, one per step; NaN marks a missing sample.

    ``end_time`` is when the last sample was taken, in the same clock (seconds)
    as the ``now`` given to :func:`decide`.
    """

    values: FloatArray
    step_seconds: float
    end_time: float

    def problem(self, now: float) -> tuple[HoldReason, str] | None:
        """(reason code, words) when the history cannot be trusted, else None."""
        finite = np.flatnonzero(np.isfinite(self.values))
        if finite.size == 0:
            return HoldReason.MISSING_METRICS, "no load samples in the history window"
        missing = 1.0 - finite.size / self.values.size
        if missing > MAX_MISSING_SHARE:
            # A new workload holds until its history fills (hours, at the
            # default 6 h): say how much is missing, not only that it is.
            needed = math.ceil((1.0 - MAX_MISSING_SHARE) * self.values.size) - finite.size
            window = format_duration((self.values.size - 1) * self.step_seconds)
            wait = format_duration(needed * self.step_seconds)
            return HoldReason.MISSING_METRICS, (
                f"{missing:.0%} of the {window} history window has no samples: forecasting "
                f"waits for half of it, {counted(needed, 'more sample')} ({wait} at one a step)"
            )
        age = now - self.newest_time
        if age > STALE_AFTER_STEPS * self.step_seconds:
            return HoldReason.STALE_METRICS, f"the newest load sample is {format_duration(age)} old"
        return None

    @property
    def newest_time(self) -> float:
        """When the newest finite sample was taken (call only when there is one)."""
        finite = np.flatnonzero(np.isfinite(self.values))
        return float(self.end_time - (self.values.size - 1 - finite[-1]) * self.step_seconds)

    @property
    def newest_load(self) -> float:
        """The newest finite sample (call only when there is one)."""
        finite = self.values[np.isfinite(self.values)]
        return float(finite[-1])


# (history, horizon in steps, interval level) -> Forecast. The caller chooses
# the model and how often it is re-selected; raising ValueError or
# ArithmeticError means "no forecast this time".
Forecaster = Callable[[LoadHistory, int, float], Forecast]


@dataclass(frozen=True)
class Decision:
    """Desired replicas, why, and the state to keep for the next decision.

    ``held`` names why the current count was held (MissingMetrics,
    StaleMetrics, SelectingModel, ForecastFailed, ScalingDisabled); ``limit`` names what
    bounded the forecast's count (HPA's reason codes: ScaleUpLimit,
    TooManyReplicas, ScaleDownStabilized, ...), None when nothing did.
    ``beyond_ceiling``: the sample this decision counted against an overload
    budget overloaded beyond what the highest threshold provisioned for it.
    """

    desired_replicas: int
    current_replicas: int
    reasons: tuple[str, ...]
    state: ScalingState
    forecast: Forecast | None = None
    load_bound: float | None = None
    held: HoldReason | None = None
    limit: LimitReason | None = None
    beyond_ceiling: bool = False

    @property
    def message(self) -> str:
        return "; ".join(self.reasons)

    @property
    def changes_replicas(self) -> bool:
        return self.desired_replicas != self.current_replicas


def decide(
    spec: ScalingSpec,
    history: LoadHistory,
    current_replicas: int,
    state: ScalingState,
    *,
    now: float,
    forecaster: Forecaster,
    ready_replicas: int | None = None,
) -> Decision:
    """Replicas to run now so that the forecast load is served once new pods are ready.

    ``ready_replicas`` (default: all of them) served the newest load sample;
    with an overload budget, whether they were enough steers the quantile.
    """
    lowest, highest = spec.min_replicas, spec.max_replicas
    if current_replicas == 0:
        # As the HPA does: a target scaled to zero by hand is left alone.
        return Decision(
            0,
            0,
            ("the target is scaled to zero; autoscaling is off until it is scaled up",),
            state,
            held=HoldReason.SCALING_DISABLED,
        )
    if not lowest <= current_replicas <= highest:
        clamped = min(max(current_replicas, lowest), highest)
        words = "minReplicas" if clamped == lowest else "maxReplicas"
        return Decision(
            clamped,
            current_replicas,
            (
                f"{counted(current_replicas, 'replica')} is outside [{lowest}, {highest}]: "
                f"{words} {clamped}",
            ),
            state,
            limit=(
                LimitReason.TOO_FEW_REPLICAS if clamped == lowest else LimitReason.TOO_MANY_REPLICAS
            ),
        )
    problem = history.problem(now)
    if problem is not None:
        code, words = problem
        return Decision(
            current_replicas,
            current_replicas,
            (holding(current_replicas, words),),
            state,
            held=code,
        )

    reasons: list[str] = []
    ready = current_replicas if ready_replicas is None else ready_replicas
    state, beyond = _count_overload(spec, history, ready, state)
    floor = spec.replicas_for(history.newest_load)
    horizon = spec.horizon_steps(history.step_seconds)
    forecast: Forecast | None = None
    bound: float | None = None
    held: HoldReason | None = None
    try:
        forecast = forecaster(history, horizon, spec.interval)
    except ModelPendingError as error:
        held = HoldReason.SELECTING_MODEL
        proposal = max(current_replicas, floor)
        reasons.append(f"{error}: holding {current_replicas} unless load needs more")
    except (ValueError, ArithmeticError) as error:
        held = HoldReason.FORECAST_FAILED
        proposal = max(current_replicas, floor)
        reasons.append(f"no forecast ({error}): holding {current_replicas} unless load needs more")
    if forecast is not None:
        sizing = _size(spec, forecast, current_replicas, state.overload, history.step_seconds)
        bound, proposal = sizing.load, max(sizing.replicas, floor)
        reasons.append(sizing.reason)
        reasons.extend(f"forecast note: {note}" for note in forecast.notes)
        if spec.budgeted:
            state = replace(state, overload=_expect_ceiling(history, forecast, state.overload))
    if floor > current_replicas and floor == proposal:
        reasons.append(f"reactive floor: the current load {history.newest_load:.4g} needs {floor}")

    behavior = spec.effective_behavior
    stable, rate = state.normalize(
        behavior, current_replicas, proposal, min_replicas=lowest, max_replicas=highest, now=now
    )
    limit: LimitReason | None = None
    if stable.replicas != proposal:
        limit = stable.reason
        reasons.append(stable.message)
    if rate.replicas != stable.replicas:
        limit = rate.reason
        reasons.append(rate.message)
    desired = rate.replicas
    reasons.append(
        f"{counted(desired, 'replica')} (from {current_replicas})"
        if desired != current_replicas
        else f"stay at {counted(desired, 'replica')}"
    )
    return Decision(
        desired,
        current_replicas,
        tuple(reasons),
        state.with_recommendation(behavior, now, proposal),
        forecast,
        bound,
        held,
        limit,
        beyond,
    )


def _count_overload(
    spec: ScalingSpec, history: LoadHistory, ready: int, state: ScalingState
) -> tuple[ScalingState, bool]:
    """With a budget, count the newest sample against what the ready pods could serve,
    once, and against what the highest threshold would have provisioned for it; the
    state, and whether the sample overloaded beyond that."""
    if not spec.budgeted:
        return state, False
    tracker, sample_time = state.overload, history.newest_time
    if not tracker.is_new(sample_time):
        return state, False
    overloaded = _exceeds(spec, history.newest_load, ready)
    ceiling = tracker.ceiling_at(sample_time, tolerance=history.step_seconds / 2.0)
    beyond = ceiling is not None and _exceeds(
        spec, history.newest_load, max(spec.min_replicas, spec.replicas_for(ceiling))
    )
    counted = tracker.count(spec.overload_budget, sample_time, overloaded, beyond)
    return replace(state, overload=counted), overloaded and beyond


def _expect_ceiling(
    history: LoadHistory, forecast: Forecast, tracker: OverloadTracker
) -> OverloadTracker:
    """Leave the highest threshold's provisioning for the step new pods serve first (the
    forecast's last, which sizes a scale-up), to judge that step's sample by."""
    ready_at = history.end_time + forecast.horizon * history.step_seconds
    return tracker.expecting(Ceiling(ready_at, float(provisioned(forecast, HIGHEST)[-1])))


def _exceeds(spec: ScalingSpec, load: float, replicas: int) -> bool:
    """Whether ``load`` is more than ``replicas`` serve, past the sizing's rounding sliver."""
    return load - replicas * spec.per_replica > ROUNDING * spec.per_replica


@dataclass(frozen=True)
class Sizing:
    """Replicas for the forecast, the load they were sized for, and why in words."""

    replicas: int
    load: float
    reason: str


def _size(
    spec: ScalingSpec,
    forecast: Forecast,
    current: int,
    tracker: OverloadTracker,
    step_seconds: float,
) -> Sizing:
    """Size for the step when pods added now are ready; keep what the horizon still needs.

    Pods added now serve from the last step of the horizon on (the next
    decision covers the steps after), so only that step sizes a scale-up.
    Pods removed now cannot be back before then, so a scale-down keeps what
    the peak of the whole horizon needs.
    """
    if spec.budgeted:
        threshold = tracker.current(spec.overload_budget)
        loads = provisioned(forecast, threshold)
        budget = spec.overload_budget
        how = f"quantile {tracker.quantile(budget):.4g} for a {budget:.2%} overload budget"
    else:
        loads = forecast.upper
        how = f"upper bound at {spec.interval:.0%}"
    at_ready, peak = float(loads[-1]), float(loads.max())
    when_ready = spec.replicas_for(at_ready)
    kept = min(current, spec.replicas_for(peak))
    per = "capacity" if spec.budgeted else "target"
    ahead = format_duration(loads.size * step_seconds)
    if when_ready >= kept:
        return Sizing(
            when_ready,
            at_ready,
            f"{forecast.model} forecast {forecast.mean[-1]:.4g} when new pods are ready "
            f"({how}: {at_ready:.4g}) -> {counted(when_ready, 'replica')}, "
            f"{per} {spec.per_replica:.4g} each",
        )
    return Sizing(
        kept,
        peak,
        f"{forecast.model} forecast peak {forecast.mean.max():.4g} within {ahead} "
        f"({how}: {peak:.4g}) -> keep {counted(kept, 'replica')}, "
        f"{per} {spec.per_replica:.4g} each",
    )
