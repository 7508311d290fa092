"""The shadow HPA: advanced each evaluation, and its comparison as status, metrics and verdict."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from predictive_scaler.operator import metrics
from predictive_scaler.operator.kube import Scale
from predictive_scaler.operator.persisted import previous_shadow
from predictive_scaler.operator.report import timestamp
from predictive_scaler.operator.resource import Mode, PredictiveScalerSpec
from predictive_scaler.scaling import Decision, LoadHistory
from predictive_scaler.simulation.fallback import judge_against_shadow, judged_side
from predictive_scaler.simulation.shadow import Observed, ShadowState
from predictive_scaler.simulation.tallies import JUDGED, SIDES, WINDOWS, WindowFigures
from predictive_scaler.units import format_duration


def _reported_side(dry_run: bool) -> str:
    # A DryRun object runs nothing: its side is the forecast's decisions, replayed.
    return "replayed" if dry_run else "predictive"


def _signed(share: float | None) -> str | None:
    return None if share is None else f"{share * 100:+.0f}%"


def _window_status(figures: WindowFigures, dry_run: bool) -> dict[str, Any]:
    report: dict[str, Any] = {"window": figures.window.name, "minutes": round(figures.minutes, 3)}
    for side in SIDES:
        cost = figures.costs[side]
        report[side] = {
            "replicaMinutes": round(cost.replica_minutes, 3),
            "overloadMinutes": round(cost.overload_minutes, 3),
        }
    saved = _signed(figures.saved(_reported_side(dry_run)))
    if saved is not None:
        report["saved"] = saved
    if figures.forecast_error is not None:
        report["forecastError"] = round(figures.forecast_error, 4)
    if figures.coverage is not None:
        report["forecastCoverage"] = round(figures.coverage, 4)
    return report


def _minutes(minutes: float) -> str:
    """Whole minutes once there are hundreds; three significant figures below, so that the
    figures beside a percentage show the difference it states (a compressed demo's
    24 h window holds a few replica-minutes: "25 vs 25" read as a tie beside "3% more")."""
    return f"{minutes:,.0f}" if minutes >= 100.0 else f"{minutes:.3g}"


def summary(figures: WindowFigures, dry_run: bool) -> str:
    """The judged window in words, e.g. for ``kubectl describe``."""
    side = _reported_side(dry_run)
    ours, hpa = figures.costs[side], figures.costs["hpa"]
    saved = figures.saved(side)
    who = "the forecast's decisions (replayed)" if dry_run else "this workload"
    if saved is None:
        return f"no load counted yet over the last {figures.window.name}"
    percent = round(abs(saved) * 100)
    # "0% fewer" would name a direction the rounded figure does not have.
    change = (
        "as many replica-minutes as"
        if percent == 0
        else f"{percent}% {'fewer' if saved < 0 else 'more'} replica-minutes than"
    )
    return (
        f"over the last {figures.window.name} ({figures.minutes:,.0f} min): {who} ran {change}"
        f" the shadow HPA ({_minutes(ours.replica_minutes)} vs"
        f" {_minutes(hpa.replica_minutes)}), with {_minutes(ours.overload_minutes)} vs"
        f" {_minutes(hpa.overload_minutes)} overload minutes"
    )


def window_figures(shadow: ShadowState) -> list[WindowFigures]:
    """Every window's figures, once per evaluation for both status and metrics."""
    return [shadow.tallies.figures(window, shadow.consumed_until) for window in WINDOWS]


def comparison_status(
    shadow: ShadowState, windows: list[WindowFigures], dry_run: bool
) -> dict[str, Any]:
    judged = windows[WINDOWS.index(JUDGED)]
    report: dict[str, Any] = {
        "since": timestamp(shadow.since),
        "hpaReplicas": shadow.hpa_replicas,
        "summary": summary(judged, dry_run),
        # A window with nothing counted yet would only list zeros (the summary says so).
        "windows": [_window_status(figures, dry_run) for figures in windows if figures.minutes],
    }
    saved = _signed(judged.saved(_reported_side(dry_run)))
    # None deletes an earlier figure (the status is merge-patched).
    report["saved"] = saved
    return report


def worse_message(shadow: ShadowState | None, dry_run: bool) -> str | None:
    """Words for ForecastReliable=False/WorseThanReactive, or None while the forecast holds up."""
    if shadow is None:
        return None
    side = judged_side(shadow, dry_run)
    figures = shadow.tallies.judged(shadow.consumed_until)
    if not shadow.following and not figures.worse_than_reactive(shadow.step_seconds, side):
        return None
    ours, hpa = figures.costs[side], figures.costs["hpa"]
    who = "this workload" if side == "predictive" else "the forecast's decisions (replayed)"
    words = (
        f"over the last {format_duration(figures.minutes * 60.0)} {who} took"
        f" {ours.replica_minutes:,.0f} replica-minutes and was overloaded"
        f" {ours.overload_minutes:,.1f} minutes, the shadow HPA {hpa.replica_minutes:,.0f}"
        f" and {hpa.overload_minutes:,.1f}"
    )
    if shadow.following:
        since = timestamp(shadow.switched_at or shadow.consumed_until)
        return (
            f"following the shadow HPA's replicas since {since}, until the forecast's own"
            f" decisions win again; {words}"
        )
    advice = "check spec.scaling.leadTime against the pods' start-up, or try other models"
    if not dry_run:
        advice += "; spec.comparison.whenWorseThanReactive: FollowHPA sets the HPA's count"
    return f"{words}; {advice}"


def publish(namespace: str, name: str, shadow: ShadowState, windows: list[WindowFigures]) -> None:
    labels = (namespace, name)
    metrics.REPLICAS.labels(*labels, "shadow_hpa").set(shadow.hpa_replicas)
    for figures in windows:
        window = figures.window
        for side in SIDES:
            cost = figures.costs[side]
            metrics.REPLICA_MINUTES.labels(*labels, side, window.name).set(cost.replica_minutes)
            metrics.OVERLOAD_MINUTES.labels(*labels, side, window.name).set(cost.overload_minutes)
        if figures.coverage is not None and figures.forecast_error is not None:
            metrics.FORECAST_COVERAGE.labels(*labels, window.name).set(figures.coverage)
            metrics.FORECAST_ERROR.labels(*labels, window.name).set(figures.forecast_error)
        else:
            # No forecast came due in the window (any more): no stale figure either.
            for gauge in (metrics.FORECAST_COVERAGE, metrics.FORECAST_ERROR):
                with contextlib.suppress(KeyError):
                    gauge.remove(*labels, window.name)


@dataclass(frozen=True)
class Compared:
    """The decision (the shadow HPA's count when following it), the shadow, and why it wins."""

    decision: Decision
    shadow: ShadowState | None
    worse: str | None


def compared(
    spec: PredictiveScalerSpec,
    raw_status: Mapping[str, Any],
    decision: Decision,
    history: LoadHistory,
    scale: Scale,
    *,
    ok: bool,
) -> Compared:
    """Advance the shadow HPA on this history (not without metrics: ``ok`` False)."""
    seen = None
    if ok:
        seen = Observed(
            history, scale.replicas, scale.ready, decision.desired_replicas, decision.forecast
        )
    dry_run = spec.scaling.mode is Mode.DRY_RUN
    decision, shadow = judge_against_shadow(
        decision,
        previous_shadow(raw_status),
        spec.shadow_spec(),
        seen,
        fallback=spec.comparison.when_worse_than_reactive,
        dry_run=dry_run,
    )
    if shadow is None:
        return Compared(decision, None, None)
    return Compared(decision, shadow, worse_message(shadow, dry_run))
