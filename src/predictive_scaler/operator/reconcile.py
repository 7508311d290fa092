"""One evaluation of one PredictiveScaler: read, decide with the pure policy, act, report.

Synchronous and free of kopf, so it runs in a worker thread and can be tested
against the real API server and Prometheus without an operator process. The
decision itself is :func:`predictive_scaler.scaling.decide`, the same code the
`backtest` command replays.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from kubernetes.client.exceptions import ApiException
from pydantic import ValidationError

from predictive_scaler.forecasting.seasons import TimedSeries
from predictive_scaler.operator import comparison, failpoints, metrics
from predictive_scaler.operator.conditions import Lateness, Observation, observed
from predictive_scaler.operator.evaluation import (
    Evaluation,
    EventNote,
    ObjectRef,
    blocked_evaluation,
    reported,
    selection_notes,
)
from predictive_scaler.operator.histories import Deadline, read_histories
from predictive_scaler.operator.kube import Scale, TargetError, Workloads
from predictive_scaler.operator.persisted import (
    PendingScale,
    pending_scale_status,
    restored_scaling_state,
    shadow_status,
)
from predictive_scaler.operator.report import (
    Published,
    decision_status,
    publish,
    without_stale_keys,
)
from predictive_scaler.operator.resource import Mode, PredictiveScalerSpec, ScaleTargetRef
from predictive_scaler.operator.rivals import NO_CLAIMS, TargetClaims
from predictive_scaler.operator.runtime import ObjectRuntime
from predictive_scaler.operator.settings import OperatorSettings, recent_rate_window
from predictive_scaler.operator.sources import LoadSeries, MetricsError, MetricSource, Refusal
from predictive_scaler.refs import ScalerRef
from predictive_scaler.scaling import (
    Decision,
    HoldReason,
    ScalingSpec,
    ScalingState,
    decide,
    holding,
)
from predictive_scaler.units import format_duration

log = logging.getLogger(__name__)


def ranks(target: ScaleTargetRef) -> bool:
    """Whether scale-in order can be steered: a StatefulSet always removes its highest
    ordinal and ignores pod-deletion-cost (ReplicaSets, so Deployments, honour it)."""
    return not (target.kind == "StatefulSet" and target.api_version == "apps/v1")


@dataclass(frozen=True)
class Admitted:
    """An object that is evaluated: its spec, and its target's scale as read now."""

    spec: PredictiveScalerSpec
    scaling_spec: ScalingSpec
    scale: Scale


@dataclass(frozen=True)
class NotEvaluated:
    """Why an object is not evaluated this time: the reason of its Ready=False condition."""

    reason: str
    message: str


@dataclass(frozen=True)
class Scaled:
    """What patching the target's scale came to: the state, its Events, and when the API
    refused the patch, why (``refusal``) and the scale left pending (``unresolved``)."""

    state: ScalingState
    events: tuple[EventNote, ...] = ()
    refusal: str | None = None
    unresolved: PendingScale | None = None


class Evaluator:
    """Evaluates objects with one Kubernetes client, one metric source, one set of settings."""

    def __init__(
        self,
        kube: Workloads,
        source: MetricSource,
        settings: OperatorSettings,
        *,
        rank_scale_in: Callable[[ScalerRef, str, MetricSource], object] | None = None,
    ) -> None:
        self.kube = kube
        self.source = source
        self.settings = settings
        # Called with (the scaler, its target's pod selector, the metric source
        # within the evaluation's budget) before replicas go down, to rank the pods.
        self.rank_scale_in = rank_scale_in

    def evaluate(
        self,
        ref: ObjectRef,
        raw_spec: Mapping[str, Any],
        raw_status: Mapping[str, Any],
        runtime: ObjectRuntime,
        now: float,
        *,
        claims: TargetClaims = NO_CLAIMS,
        lateness: Lateness | None = None,
    ) -> Evaluation:
        """Evaluate once; an evaluation that raises is a condition, never an empty status.

        ``Ready=False, reason EvaluationFailed`` names the error (and, being a
        condition change, comes with a Warning Event); the replicas are left
        as they are, and the next evaluation tries again.
        """
        try:
            evaluation = self._evaluate(
                ref, raw_spec, raw_status, runtime, now, claims=claims, lateness=lateness
            )
        except Exception as error:  # whatever it was, it must be seen
            log.exception("evaluating %s/%s failed", ref.namespace, ref.name)
            metrics.RECONCILE_ERRORS.labels("evaluate").inc()
            message = f"the evaluation failed: {type(error).__name__}: {error}"
            evaluation = blocked_evaluation(
                ref, raw_status, now, "EvaluationFailed", message, lateness=lateness
            )
        with metrics.publishing(ref.namespace, ref.name, runtime.metrics_token) as served:
            if served:
                for condition in evaluation.status["conditions"]:
                    value = {"True": 1, "False": 0}.get(condition["status"], -1)
                    metrics.CONDITION.labels(ref.namespace, ref.name, condition["type"]).set(value)
                for publication in evaluation.publications:
                    publication()
        return evaluation

    def _evaluate(
        self,
        ref: ObjectRef,
        raw_spec: Mapping[str, Any],
        raw_status: Mapping[str, Any],
        runtime: ObjectRuntime,
        now: float,
        *,
        claims: TargetClaims,
        lateness: Lateness | None,
    ) -> Evaluation:
        """Evaluate once; `claims` are the other autoscalers on the same target.

        ``lateness`` (how late this evaluation started, known only to the
        operator's loop) sets EvaluationsLate; without it there is none.
        """
        began = time.monotonic()
        admitted = self._admit(ref, raw_spec, claims)
        if isinstance(admitted, NotEvaluated):
            return blocked_evaluation(
                ref, raw_status, now, admitted.reason, admitted.message, lateness=lateness
            )
        spec, scaling_spec, scale = admitted.spec, admitted.scaling_spec, admitted.scale
        deadline = Deadline(self.source, began, self.settings.evaluation_budget)
        series = self._load(ref.namespace, spec, scale.selector)
        read = read_histories(
            deadline,
            series,
            spec.forecast,
            spec.metric.resource,
            (runtime.recent, runtime.long),
            now=now,
            min_rate_window=self.settings.min_rate_window,
        )
        history, long, metrics_error = read.recent, read.long, read.error
        selection = runtime.selection_for(spec.forecast, series)
        state = restored_scaling_state(raw_status, scale.replicas, scaling_spec.effective_behavior)
        decision = decide(
            scaling_spec,
            history,
            scale.replicas,
            state,
            now=now,
            forecaster=lambda h, horizon, level: selection.forecast_series(
                TimedSeries(h.values, h.step_seconds, h.end_time), horizon, level, now, long=long
            ),
            ready_replicas=scale.ready,
        )
        compared = comparison.compared(
            spec, raw_status, decision, history, scale, ok=metrics_error is None
        )
        decision, shadow = compared.decision, compared.shadow
        acts = spec.scaling.mode is Mode.AUTO and metrics_error is None
        scaled = Scaled(decision.state)
        later: list[Callable[[], None]] = []
        if acts and decision.changes_replicas and decision.held is not HoldReason.SCALING_DISABLED:
            scaled = self._scale(
                ref, spec, decision, now, selector=scale.selector, deadline=deadline, later=later
            )
        new_state, events = scaled.state, list(scaled.events)
        events.extend(selection_notes(selection))
        seen = Observation(
            dry_run=spec.scaling.mode is Mode.DRY_RUN,
            decision=decision,
            samples=history.values.size,
            usable_samples=int(np.isfinite(history.values).sum()),
            step=format_duration(history.step_seconds),
            metrics_error=None
            if metrics_error is None
            else (metrics_error.reason, str(metrics_error)),
            model=selection.chosen,
            seasons=selection.seasons,
            long_history_error=read.long_problem,
            worse_than_reactive=compared.worse,
            failed_rescale=scaled.refusal,
        )
        fresh = decision_status(scaling_spec, decision, history, new_state, runtime)
        if shadow is not None:
            dry_run = spec.scaling.mode is Mode.DRY_RUN
            fresh |= shadow_status(shadow)
            windows = comparison.window_figures(shadow)
            fresh["comparison"] = comparison.comparison_status(shadow, windows, dry_run)
            later.append(
                functools.partial(comparison.publish, ref.namespace, ref.name, shadow, windows)
            )
        status = without_stale_keys(raw_status, fresh)
        if scaled.unresolved is not None:
            status |= pending_scale_status(scaled.unresolved)
        if metrics_error is not None:
            status["decision"] = holding(scale.replicas, str(metrics_error))
        evaluation = reported(
            ref, raw_status, now, observed(seen), status=status, events=events, lateness=lateness
        )
        published = Published(history, scale.ready, scaling_spec, new_state)
        later.append(
            functools.partial(publish, ref.namespace, ref.name, decision, published, runtime)
        )
        return dataclasses.replace(evaluation, publications=tuple(later))

    def _admit(
        self, ref: ObjectRef, raw_spec: Mapping[str, Any], claims: TargetClaims
    ) -> Admitted | NotEvaluated:
        """The object's spec and its target's scale, or why this object is not evaluated:
        an invalid spec, a load the metric source will not read, another autoscaler on the
        target, a target that cannot be read."""
        try:
            spec = PredictiveScalerSpec.from_body(raw_spec)
            scaling_spec = spec.scaling_spec()
        except (ValidationError, ValueError) as error:
            return NotEvaluated("InvalidSpec", str(error))
        refusal = self._refusal(ref, spec)
        if refusal is not None:
            return NotEvaluated(refusal.reason, refusal.message)
        target = spec.scale_target_ref
        # A DryRun object sets no replicas, so it may watch beside any autoscaler.
        rival = None
        if spec.scaling.mode is Mode.AUTO:
            rival = claims.rival(ref.name, ref.created)
        if rival is not None:
            message = f"{rival} already manages {target.describe()}; this object sets no replicas"
            return NotEvaluated("ConflictingAutoscaler", message)
        try:
            scale = self.kube.read_scale(ref.namespace, target)
        except TargetError as error:
            return NotEvaluated(error.reason, str(error))
        return Admitted(spec, scaling_spec, scale)

    def _refusal(self, ref: ObjectRef, spec: PredictiveScalerSpec) -> Refusal | None:
        """Why the metric source will never read this object's load (scope, cost, kind)."""
        return self.source.refusal(
            self._load(ref.namespace, spec),
            confine=not self.settings.cross_namespace_queries,
            points=max(spec.forecast.history_points, spec.forecast.long_history_points),
        )

    def _load(self, namespace: str, spec: PredictiveScalerSpec, selector: str = "") -> LoadSeries:
        """The object's load at its own step, as the recent history reads it."""
        window = recent_rate_window(spec.forecast.step_seconds, self.settings.scrape_interval)
        return LoadSeries.of(namespace, spec.scale_target_ref, spec.metric, selector, window)

    def _scale(
        self,
        ref: ObjectRef,
        spec: PredictiveScalerSpec,
        decision: Decision,
        now: float,
        *,
        selector: str,
        deadline: Deadline,
        later: list[Callable[[], None]],
    ) -> Scaled:
        """Patch the target's replicas; the state records a scale only once it succeeded."""
        target, current, desired = (
            spec.scale_target_ref,
            decision.current_replicas,
            decision.desired_replicas,
        )
        notes: list[EventNote] = []
        if desired < current and self.rank_scale_in is not None and selector and ranks(target):
            try:
                deadline.check()
                scaler = ScalerRef(ref.namespace, ref.name)
                self.rank_scale_in(scaler, selector, deadline.source_within())
            except (ApiException, OSError, ValueError, MetricsError) as error:
                # Ranking is a refinement: scale in anyway, in the ReplicaSet's own order
                # (a usage read that failed included).
                notes.append(EventNote("Warning", "DeletionCostFailed", f"ranking pods: {error}"))
        intent = PendingScale(current, desired, now)
        self.kube.patch_status(ref.namespace, ref.name, pending_scale_status(intent))
        failpoints.reach("scale:before-patch")
        try:
            self.kube.patch_scale(ref.namespace, target, desired)
        except ApiException as error:
            # Said by ScalingActive (an Event when it turns), not by an Event each period;
            # the intent stays pending, as a refused patch may still have landed (a 504).
            message = f"patching {target.describe()} to {desired}: {error.status} {error.reason}"
            return Scaled(decision.state, tuple(notes), message, intent)
        failpoints.reach("scale:after-patch")
        direction = "up" if desired > current else "down"
        later.append(functools.partial(metrics.scale_action, ref.namespace, ref.name, direction))
        behavior = spec.scaling_spec().effective_behavior
        state = decision.state.after_scale(behavior, now, current, desired)
        message = f"{target.describe()} {current} -> {desired}: {decision.message}"
        return Scaled(state, (*notes, EventNote("Normal", "Scaled", message)))
