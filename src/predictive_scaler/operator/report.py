"""A decision as the object's status and as the operator's metrics."""

from __future__ import annotations

import datetime
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from prometheus_client import Gauge

from predictive_scaler.forecasting.known_seasons import SeasonKnowledge
from predictive_scaler.operator import metrics
from predictive_scaler.operator.persisted import scaling_state_status
from predictive_scaler.operator.runtime import ObjectRuntime
from predictive_scaler.scaling import (
    Decision,
    LoadHistory,
    OverloadTracker,
    ScalingSpec,
    ScalingState,
)
from predictive_scaler.units import format_duration


def timestamp(epoch: float) -> str:
    return datetime.datetime.fromtimestamp(epoch, tz=datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _shown(value: float) -> float:
    """``value`` to six significant figures, as status shows loads and forecasts.

    A rate() of CPU seconds reads 0.0020000027206949146 where the load is 2m:
    the digits past the sixth are the arithmetic's, not the metric's, and
    ``kubectl describe`` printed every one of them.
    """
    return float(f"{value:.6g}")


def _latest(history: LoadHistory) -> float | None:
    finite = history.values[np.isfinite(history.values)]
    return _shown(float(finite[-1])) if finite.size else None


def decision_status(
    spec: ScalingSpec,
    decision: Decision,
    history: LoadHistory,
    state: ScalingState,
    runtime: ObjectRuntime,
) -> dict[str, Any]:
    status: dict[str, Any] = {
        "currentReplicas": decision.current_replicas,
        "desiredReplicas": decision.desired_replicas,
        "decision": decision.message,
        **scaling_state_status(state),
    }
    if state.last_scale_time is not None:
        status["lastScaleTime"] = timestamp(state.last_scale_time)
    # None deletes what an earlier spec (with a budget) wrote.
    status["overload"] = (
        overload_status(spec.overload_budget, state.overload) if spec.budgeted else None
    )
    # None deletes a load no sample in the window measures any more (Prometheus down).
    status["load"] = _latest(history)
    forecast, selection = decision.forecast, runtime.selection
    if selection is None:
        return status
    report: dict[str, Any] = {}
    if forecast is not None:
        # The step whose upper bound the decision sized for.
        peak = int(np.argmax(forecast.upper))
        horizon = format_duration(forecast.upper.size * history.step_seconds)
        report |= {
            "model": selection.chosen or forecast.model,
            "horizon": horizon,
            "value": _shown(float(forecast.mean[peak])),
            "lower": _shown(float(forecast.lower[peak])),
            "upper": _shown(float(forecast.upper[peak])),
            "level": forecast.level,
            "summary": f"{forecast.upper[peak]:.3g} in {horizon}",
        }
    elif selection.chosen is not None:
        # Holding without a forecast: the model stays named, its last numbers go (as
        # stale keys, nulled), so `kubectl get psc` shows no forecast rather than an old one.
        report["model"] = selection.chosen
    if selection.fitted_at is not None:
        report["selectedAt"] = timestamp(selection.fitted_at)
    if selection.selection is not None:
        report["backtestErrors"] = {
            name: round(score, 4)
            for name, score in selection.backtest_errors.items()
            if math.isfinite(score)
        }
    if selection.unscored:
        report["unscored"] = list(selection.unscored)
    if selection.cycle_seconds is not None:
        report["cycle"] = format_duration(selection.cycle_seconds)
    if selection.handover.failure is not None:
        report["selectionFailure"] = selection.handover.failure
    if selection.seasons is not None:
        report["seasons"] = seasons_status(selection.seasons)
    status["forecast"] = report or None
    return status


# Status objects the operator writes whole on every evaluation. The status is
# merge-patched, which keeps keys a patch leaves out: a key an earlier
# evaluation wrote and this one did not must be sent as null to go.
OWNED = ("forecast", "overload", "comparison")


def without_stale_keys(previous: Mapping[str, Any], status: dict[str, Any]) -> dict[str, Any]:
    """``status`` with null for each key of an owned object that only ``previous`` has."""
    pruned = dict(status)
    for key in OWNED:
        old, new = previous.get(key), pruned.get(key)
        if isinstance(old, Mapping) and isinstance(new, dict):
            pruned[key] = _with_removed_keys_nulled(old, new)
    return pruned


def _with_removed_keys_nulled(
    previous: Mapping[str, Any], current: dict[str, Any]
) -> dict[str, Any]:
    merged = dict(current)
    for key, old in previous.items():
        if key not in merged:
            merged[key] = None
        elif isinstance(old, Mapping) and isinstance(merged[key], dict):
            merged[key] = _with_removed_keys_nulled(old, merged[key])
    return merged


def overload_status(budget: float, tracker: OverloadTracker) -> dict[str, Any]:
    """The budget, the share realised over the window, and the quantile steered to meet it."""
    report: dict[str, Any] = {
        "budget": percent(budget),
        "quantile": round(tracker.quantile(budget), 6),
        "samples": tracker.samples,
    }
    realised = tracker.realised
    if realised is None:
        report["summary"] = f"- of {percent(budget)}"
        return report
    window = tracker.counted_until - tracker.hours[0].start if tracker.counted_until else 0.0
    report["realised"] = percent(realised)
    report["window"] = format_duration(max(window, 1.0))
    report["overloaded"] = tracker.overloaded
    report["beyondCeiling"] = tracker.beyond_ceiling
    report["summary"] = f"{percent(realised)} of {percent(budget)}"
    beyond = tracker.beyond_ceiling_share or 0.0  # samples were counted: not None
    if beyond > budget:
        # Pinned at its highest or on its way there: say why no quantile helps.
        report["limit"] = (
            f"{percent(beyond)} of the samples overloaded beyond what the highest quantile "
            f"provisions, more than the {percent(budget)} budget: no quantile keeps it; more "
            "minReplicas or a shorter pod start-up would"
        )
    elif tracker.at_limit is not None:
        report["limit"] = (
            "the quantile is at its highest: overloads come faster than more headroom prevents"
            if tracker.at_limit == "highest"
            else "the quantile is at its lowest: the budget is kept with room to spare"
        )
    return report


def percent(share: float) -> str:
    return f"{share * 100:.3g}%"


@dataclass(frozen=True)
class Published:
    """What the metrics show of one evaluation besides the decision itself."""

    history: LoadHistory
    ready_replicas: int
    spec: ScalingSpec
    state: ScalingState


def publish(
    namespace: str, name: str, decision: Decision, seen: Published, runtime: ObjectRuntime
) -> None:
    """Set the object's series from this evaluation; those it has nothing true for (a
    budget no longer set, a forecast not made this time) are withdrawn, not left frozen."""
    labels = (namespace, name)
    _set_or_withdraw(metrics.LOAD, labels, _latest(seen.history))
    metrics.TARGET_PER_REPLICA.labels(*labels).set(seen.spec.per_replica)
    budgeted = seen.spec.budgeted
    budget, tracker = seen.spec.overload_budget, seen.state.overload
    _set_or_withdraw(metrics.OVERLOAD_BUDGET, labels, budget if budgeted else None)
    quantile = tracker.quantile(budget) if budgeted else None
    _set_or_withdraw(metrics.FORECAST_QUANTILE, labels, quantile)
    _set_or_withdraw(metrics.OVERLOAD_REALISED, labels, tracker.realised if budgeted else None)
    beyond = tracker.beyond_ceiling_share if budgeted else None
    _set_or_withdraw(metrics.OVERLOAD_BEYOND_CEILING, labels, beyond)
    metrics.REPLICAS.labels(*labels, "current").set(decision.current_replicas)
    metrics.REPLICAS.labels(*labels, "ready").set(seen.ready_replicas)
    metrics.REPLICAS.labels(*labels, "desired").set(decision.desired_replicas)
    forecast = decision.forecast
    if forecast is None:
        metrics.withdraw_forecast(namespace, name)
        return
    peak = int(np.argmax(forecast.upper))
    metrics.FORECAST.labels(*labels, "mean").set(float(forecast.mean[peak]))
    metrics.FORECAST.labels(*labels, "lower").set(float(forecast.lower[peak]))
    metrics.FORECAST.labels(*labels, "upper").set(float(forecast.upper[peak]))
    selection = runtime.selection
    chosen = (selection.chosen if selection else None) or forecast.model
    metrics.set_model(namespace, name, chosen)
    if selection is not None:
        score = selection.backtest_errors.get(chosen)
        if score is not None and math.isfinite(score):
            metrics.BACKTEST_ERROR.labels(*labels).set(score)


def _set_or_withdraw(metric: Gauge, labels: tuple[str, str], value: float | None) -> None:
    if value is None:
        metrics.withdraw(metric, *labels)
    else:
        metric.labels(*labels).set(value)


def seasons_status(seasons: SeasonKnowledge) -> dict[str, Any]:
    report: dict[str, Any] = {
        "found": [format_duration(period) for period in seasons.seasons],
        "inUse": seasons.in_use,
        "history": format_duration(seasons.history_seconds),
        "summary": seasons.summary(),
    }
    if seasons.waiting_for is not None:
        report["waitingFor"] = format_duration(seasons.waiting_for)
        report["needed"] = format_duration(seasons.needed_seconds)
    return report
