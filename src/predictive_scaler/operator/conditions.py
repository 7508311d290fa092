"""Conditions of a PredictiveScaler, and which of them changed (each cause of a change is an
Event)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from predictive_scaler.forecasting.known_seasons import SeasonKnowledge
from predictive_scaler.scaling import Decision, HoldReason

Status = Literal["True", "False", "Unknown"]
TYPES = (
    "Ready",
    "MetricsAvailable",
    "ForecastReliable",
    "ScalingActive",
    "ScalingLimited",
    "EvaluationsLate",
)
# A condition whose True is bad news: its change to True is a Warning.
_TRUE_IS_BAD = {"ScalingLimited", "EvaluationsLate"}
# Limits that are the policy working, not news: a scale-down held by its stabilisation
# window (the HPA files it under AbleToScale=True). Their Events are Normal, not Warning.
_ROUTINE = {("ScalingLimited", "ScaleDownStabilized")}
# EvaluationsLate turns True after this many evaluations in a row started more
# than half a syncPeriod late: one slow turn (a restart, a long query) is not a trend.
LATE_CYCLES = 3


@dataclass(frozen=True)
class Condition:
    type: str
    status: Status
    reason: str
    message: str

    @property
    def healthy(self) -> bool:
        if (self.type, self.reason) in _ROUTINE:
            return True
        return (self.status == "True") != (self.type in _TRUE_IS_BAD)


def merge(
    previous: Sequence[Mapping[str, Any]],
    current: Iterable[Condition],
    *,
    now: str,
    generation: int,
) -> tuple[list[dict[str, Any]], list[Condition]]:
    """The new status.conditions, and the conditions whose status or reason changed.

    `lastTransitionTime` moves only when the status does, as Kubernetes conventions ask.
    """
    before = {str(c.get("type")): c for c in previous}
    merged: list[dict[str, Any]] = []
    changed: list[Condition] = []
    for condition in current:
        old = before.get(condition.type)
        transitioned = old is None or old.get("status") != condition.status
        if transitioned or (old is not None and old.get("reason") != condition.reason):
            changed.append(condition)
        merged.append(
            {
                "type": condition.type,
                "status": condition.status,
                "reason": condition.reason,
                "message": condition.message,
                "lastTransitionTime": now
                if transitioned or old is None
                else old.get("lastTransitionTime", now),
                "observedGeneration": generation,
            }
        )
    return merged, changed


@dataclass(frozen=True)
class Lateness:
    """How late an evaluation started against its syncPeriod, and why."""

    seconds: float
    # Of which spent waiting for an evaluation worker; the rest is the object's
    # own last evaluation outlasting its syncPeriod.
    queued_seconds: float
    period_seconds: float
    # Evaluations in a row, this one included, that started over half a period late.
    late_in_a_row: int
    # How long the object's last evaluation took, once a worker had it.
    last_duration: float

    @property
    def late(self) -> bool:
        return self.seconds > self.period_seconds / 2


def lateness_condition(lateness: Lateness) -> Condition:
    """True once LATE_CYCLES evaluations in a row started over half a period late."""
    period = f"syncPeriod {lateness.period_seconds:g}s"
    if lateness.late_in_a_row < LATE_CYCLES:
        return Condition(
            "EvaluationsLate",
            "False",
            "OnTime",
            f"evaluations start within half a {period}",
        )
    started = (
        f"{lateness.late_in_a_row} evaluations in a row started over half a {period} late,"
        f" the last {lateness.seconds:.1f} s"
    )
    if lateness.queued_seconds >= lateness.seconds / 2:
        return Condition(
            "EvaluationsLate",
            "True",
            "QueueBacklog",
            f"{started}: {lateness.queued_seconds:.1f} s of it waiting for an evaluation"
            " worker behind other objects (see predictive_scaler_queue_wait_seconds)",
        )
    return Condition(
        "EvaluationsLate",
        "True",
        "OwnCost",
        f"{started}: its own evaluation takes {lateness.last_duration:.1f} s, longer than its"
        " syncPeriod; lengthen spec.syncPeriod or make its history smaller",
    )


def _unknown(kind: str, reason: str, message: str) -> Condition:
    return Condition(kind, "Unknown", reason, message)


# Ready=False reasons of an object that cannot act at all (blocked before any
# decision): its workload is not its to rebalance either. Metrics that fail for a
# while are not among them: the object still owns its workload.
CANNOT_ACT = frozenset(
    {
        "InvalidSpec",
        "InvalidQuery",
        "QueryOutsideNamespace",
        "QueryTooExpensive",
        "UnsupportedMetric",
        "ConflictingAutoscaler",
        "TargetNotFound",
        "TargetNotScalable",
        "EvaluationFailed",
    }
)


def may_act(conditions: Sequence[Mapping[str, Any]]) -> bool:
    """Whether an object's status lets it act on its workload: evaluated (it has a Ready
    condition) and not blocked (CANNOT_ACT). Not yet evaluated, it may still be refused
    (a foreign query, a lost conflict), so it does not act before it is."""
    ready = next((c for c in conditions if c.get("type") == "Ready"), None)
    return ready is not None and not (
        ready.get("status") == "False" and ready.get("reason") in CANNOT_ACT
    )


def blocked(reason: str, message: str) -> list[Condition]:
    """Conditions when the object cannot be evaluated at all (bad spec, rival, no target)."""
    return [
        Condition("Ready", "False", reason, message),
        _unknown("MetricsAvailable", reason, "not queried"),
        _unknown("ForecastReliable", reason, "no forecast"),
        Condition("ScalingActive", "False", reason, message),
        Condition("ScalingLimited", "False", reason, "no decision"),
    ]


@dataclass(frozen=True)
class Observation:
    """What one evaluation saw, reduced to what the conditions speak of."""

    dry_run: bool
    decision: Decision
    samples: int
    usable_samples: int
    step: str
    metrics_error: tuple[str, str] | None  # (reason, message)
    model: str | None
    seasons: SeasonKnowledge | None = None
    long_history_error: str | None = None
    # Why the workload (or the forecast's replayed decisions) loses to the shadow HPA.
    worse_than_reactive: str | None = None
    # Why the target's scale could not be patched this time (the API's refusal).
    failed_rescale: str | None = None


def _metrics(seen: Observation) -> Condition:
    if seen.metrics_error is not None:
        return Condition("MetricsAvailable", "False", *seen.metrics_error)
    if seen.decision.held in (HoldReason.MISSING_METRICS, HoldReason.STALE_METRICS):
        return Condition("MetricsAvailable", "False", seen.decision.held, seen.decision.message)
    return Condition(
        "MetricsAvailable",
        "True",
        "MetricsFound",
        f"{seen.usable_samples} of {seen.samples} samples, every {seen.step}",
    )


def _reliability(seen: Observation, metrics: Condition) -> Condition:
    forecast = seen.decision.forecast
    if forecast is not None and seen.worse_than_reactive is not None:
        return Condition("ForecastReliable", "False", "WorseThanReactive", seen.worse_than_reactive)
    if forecast is not None and forecast.notes:
        return Condition("ForecastReliable", "False", "ModelFellBack", "; ".join(forecast.notes))
    if forecast is not None:
        model = seen.model or forecast.model
        if seen.long_history_error is not None:
            message = (
                f"forecasting with {model} without new long history: {seen.long_history_error}"
            )
            return Condition("ForecastReliable", "False", "LongHistoryUnavailable", message)
        seasons = seen.seasons
        if seasons is not None and seasons.cold:
            message = f"{seasons.summary()}; forecasting with {model} from what there is meanwhile"
            return Condition("ForecastReliable", "False", "LearningSeasons", message)
        words = seasons.summary() if seasons is not None else ""
        message = f"forecasting with {model}" + (f"; {words}" if words else "")
        return Condition("ForecastReliable", "True", "ModelSelected", message)
    return _without_forecast(seen, metrics)


def _without_forecast(seen: Observation, metrics: Condition) -> Condition:
    held, message = seen.decision.held, seen.decision.message
    if held is HoldReason.SELECTING_MODEL:
        return _unknown("ForecastReliable", held, message)
    if held is HoldReason.FORECAST_FAILED:
        return Condition("ForecastReliable", "False", held, message)
    return _unknown("ForecastReliable", metrics.reason, "no forecast without metrics")


def _activity(seen: Observation) -> Condition:
    decision = seen.decision
    if seen.dry_run:
        return Condition(
            "ScalingActive", "False", "DryRun", "decisions are reported, never applied"
        )
    if decision.held is HoldReason.SCALING_DISABLED:
        return Condition("ScalingActive", "False", decision.held, decision.message)
    if seen.metrics_error is not None:
        return Condition("ScalingActive", "False", seen.metrics_error[0], "holding replicas")
    if decision.held is not None:
        return Condition("ScalingActive", "False", decision.held, "holding replicas")
    if seen.failed_rescale is not None:
        # One condition (and one Event, when it turns) for a refusal that lasts, such as
        # RBAC without patch on the scale: not a Warning Event every period.
        return Condition("ScalingActive", "False", "FailedRescale", seen.failed_rescale)
    return Condition("ScalingActive", "True", "ForecastAvailable", "replicas follow the forecast")


def observed(seen: Observation) -> list[Condition]:
    """The five conditions after an evaluation that reached a decision."""
    metrics = _metrics(seen)
    reliable = _reliability(seen, metrics)
    decision = seen.decision
    if decision.limit is not None:
        limited = Condition("ScalingLimited", "True", decision.limit, decision.message)
    else:
        limited = Condition(
            "ScalingLimited", "False", "DesiredWithinRange", "nothing bounded the decision"
        )
    if metrics.status != "True":
        ready = Condition("Ready", "False", metrics.reason, metrics.message)
    elif reliable.reason == "ForecastFailed":
        ready = Condition("Ready", "False", "ForecastFailed", reliable.message)
    elif seen.failed_rescale is not None:
        ready = Condition("Ready", "False", "FailedRescale", seen.failed_rescale)
    else:
        ready = Condition("Ready", "True", "Evaluated", decision.message)
    return [ready, metrics, reliable, _activity(seen), limited]
