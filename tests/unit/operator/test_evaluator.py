"""Every condition path of one evaluation, with fakes for the API and the metric source.

The end-to-end tests prove the real thing against the local control plane;
these pin down, in milliseconds, what each situation makes of the status,
the Events and the target's replicas.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Self

import numpy as np
import pytest
from kubernetes.client.exceptions import ApiException
from prometheus_client import REGISTRY

from predictive_scaler.forecasting import RefreshRequest, refresh_model
from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.forecasting.handover import Delivery
from predictive_scaler.operator.evaluation import Evaluation, ObjectRef
from predictive_scaler.operator.kube import Scale, TargetNotFoundError
from predictive_scaler.operator.persisted import previous_shadow
from predictive_scaler.operator.prometheus import PrometheusSource
from predictive_scaler.operator.reconcile import Evaluator
from predictive_scaler.operator.resource import ScaleTargetRef
from predictive_scaler.operator.rivals import HpaClaim, TargetClaims
from predictive_scaler.operator.runtime import ObjectRuntime
from predictive_scaler.operator.settings import OperatorSettings
from predictive_scaler.operator.sources import (
    LoadSeries,
    MetricsError,
    MetricSource,
    Refusal,
    Usage,
)
from predictive_scaler.refs import PodRef, ScalerRef

pytestmark = pytest.mark.unit

NOW = 1_800_000_000.0
REF = ObjectRef("shop", "web", 1, "2026-01-01T00:00:00Z")
SETTINGS = OperatorSettings.from_environment({"PROMETHEUS_URL": "http://prometheus:9090"})


def spec(**changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minReplicas": 1,
        "maxReplicas": 10,
        "metric": {"resource": "cpu", "targetPerReplica": "500m"},
        "forecast": {"models": ["naive"], "history": "10m", "step": "1m"},
        "scaling": {"leadTime": "1m"},
    }
    body.update(changes)
    return body


@dataclass
class FakeWorkloads:
    """The target's scale as the API would answer, and what was patched."""

    scale: Scale | None = field(default_factory=lambda: Scale(2, 2, "app=web"))
    scaled: list[int] = field(default_factory=list)
    statuses: list[dict[str, Any]] = field(default_factory=list)

    def read_scale(self, namespace: str, target: ScaleTargetRef) -> Scale:
        if self.scale is None:
            raise TargetNotFoundError(f"{target.describe()} not found in namespace {namespace}")
        return self.scale

    def patch_scale(self, namespace: str, target: ScaleTargetRef, replicas: int) -> None:
        self.scaled.append(replicas)

    def patch_status(self, namespace: str, name: str, status: dict[str, Any]) -> None:
        self.statuses.append(status)


@dataclass
class FakeSource:
    """A load of ``level`` at every step (or an error), and what it was asked.

    With ``jump`` = (time, level), samples from that time on have that level;
    with ``burst_every`` (seconds), the first third of each such round is 5 higher.
    """

    level: float = 1.0
    jump: tuple[float, float] | None = None
    burst_every: float | None = None
    error: MetricsError | None = None
    refused: Refusal | None = None
    asked: list[LoadSeries] = field(default_factory=list)
    timeout: float = 10.0

    def with_timeout(self, seconds: float) -> Self:
        return replace(self, timeout=seconds)

    def refusal(self, series: LoadSeries, *, confine: bool, points: int) -> Refusal | None:
        return self.refused

    def samples(self, series: LoadSeries, *, step: float, start: float, end: float) -> FloatArray:
        self.asked.append(series)
        if self.error is not None:
            raise self.error
        values = np.full(round((end - start) / step) + 1, self.level)
        times = start + step * np.arange(values.size)
        if self.burst_every is not None:
            values += np.where(times % self.burst_every < self.burst_every / 3, 5.0, 0.0)
            values += 0.3 * np.sin(times / step * 2.4)  # and a little noise
        if self.jump is not None:
            # A little noise, the same at the same time in every read, and the jump.
            values += 0.05 * np.sin(times / step * 2.4)
            values[times >= self.jump[0]] = self.jump[1]
        return values

    def usage(self) -> Usage:
        return Usage({}, {})

    def node_cpu_history(self, step: float, points: int) -> Mapping[str, Sequence[float]]:
        return {}

    def pod_cpu_history(self, step: float, points: int) -> Mapping[PodRef, Sequence[float]]:
        return {}


NO_RIVALS = TargetClaims()


def evaluate(
    workloads: FakeWorkloads,
    source: FakeSource | PrometheusSource,
    body: dict[str, Any],
    claims: TargetClaims = NO_RIVALS,
) -> Evaluation:
    return evaluate_with(workloads, source, body, ObjectRuntime(), claims)


def evaluate_with(
    workloads: FakeWorkloads,
    source: FakeSource | PrometheusSource,
    body: dict[str, Any],
    runtime: ObjectRuntime,
    claims: TargetClaims = NO_RIVALS,
) -> Evaluation:
    evaluator = Evaluator(workloads, source, SETTINGS)
    return evaluator.evaluate(REF, body, {}, runtime, NOW, claims=claims)


def conditions(evaluation: Evaluation) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c["reason"]) for c in evaluation.status["conditions"]}


def test_a_steady_load_scales_the_target_to_what_it_needs() -> None:
    workloads, source = FakeWorkloads(), FakeSource(level=2.0)
    found = conditions(evaluate(workloads, source, spec()))
    # 2 cores at 500m a replica: 4, patched, with Ready and metrics True.
    assert workloads.scaled == [4]
    assert found["Ready"][0] == "True"
    assert found["MetricsAvailable"] == ("True", "MetricsFound")
    # The source was asked for the object's own load, its pods by the target's selector.
    assert {(s.namespace, s.pod_selector, s.resource) for s in source.asked} == {
        ("shop", "app=web", "cpu")
    }


def test_status_shows_the_load_and_forecast_to_six_figures() -> None:
    # A rate() of CPU seconds: 2m and the arithmetic's noise past it.
    status = evaluate(FakeWorkloads(), FakeSource(level=0.0020000027206949146), spec()).status
    assert status["load"] == 0.002
    forecast = status["forecast"]
    for key in ("value", "lower", "upper"):
        assert forecast[key] == float(f"{forecast[key]:.6g}")
    assert forecast["lower"] <= forecast["value"] <= forecast["upper"]


def test_dry_run_decides_and_patches_nothing() -> None:
    workloads = FakeWorkloads()
    evaluation = evaluate(workloads, FakeSource(level=2.0), spec(scaling={"mode": "DryRun"}))
    assert workloads.scaled == []
    assert evaluation.status["desiredReplicas"] == 4


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (spec(minReplicas=5, maxReplicas=2), "InvalidSpec"),
        (spec(forecast={"models": ["no-such-model"]}), "InvalidSpec"),
    ],
)
def test_an_invalid_spec_is_blocked_and_nothing_is_read(body: dict[str, Any], reason: str) -> None:
    workloads, source = FakeWorkloads(), FakeSource()
    found = conditions(evaluate(workloads, source, body))
    assert found["Ready"] == ("False", reason)
    assert source.asked == []
    assert workloads.scaled == []


def test_a_query_outside_its_namespace_is_refused_by_the_prometheus_source() -> None:
    body = spec(metric={"query": 'sum(up{namespace="other"})', "targetPerReplica": "1"})
    # The real source's refusal needs no Prometheus: it is decided before any query.
    prometheus = PrometheusSource("http://127.0.0.1:9", 1.0)
    found = conditions(evaluate(FakeWorkloads(), prometheus, body))
    assert found["Ready"] == ("False", "QueryOutsideNamespace")


def test_a_source_that_cannot_read_the_metric_says_why() -> None:
    source = FakeSource(refused=Refusal("UnsupportedMetric", "needs Prometheus"))
    evaluation = evaluate(FakeWorkloads(), source, spec())
    assert conditions(evaluation)["Ready"] == ("False", "UnsupportedMetric")
    assert "needs Prometheus" in evaluation.status["decision"]


def test_a_target_another_autoscaler_manages_is_left_alone() -> None:
    workloads, source = FakeWorkloads(), FakeSource(level=5.0)
    evaluation = evaluate(
        workloads, source, spec(), claims=TargetClaims.of([HpaClaim("web-hpa")], [])
    )
    assert conditions(evaluation)["Ready"] == ("False", "ConflictingAutoscaler")
    assert "HorizontalPodAutoscaler/web-hpa" in evaluation.status["decision"]
    assert workloads.scaled == []
    assert source.asked == []


def test_a_missing_target_is_named() -> None:
    evaluation = evaluate(FakeWorkloads(scale=None), FakeSource(), spec())
    assert conditions(evaluation)["Ready"] == ("False", "TargetNotFound")
    assert "Deployment/web not found" in evaluation.status["decision"]


@pytest.mark.parametrize("reason", ["Timeout", "Unreachable", "MultipleSeries"])
def test_a_failed_read_holds_the_replicas_and_says_why(reason: str) -> None:
    workloads = FakeWorkloads()
    source = FakeSource(level=9.0, error=MetricsError(reason, f"it failed: {reason}"))
    evaluation = evaluate(workloads, source, spec())
    assert conditions(evaluation)["MetricsAvailable"] == ("False", reason)
    assert workloads.scaled == []
    assert evaluation.status["decision"].startswith("holding 2 replicas")


def test_a_history_without_samples_holds_the_replicas() -> None:
    workloads = FakeWorkloads()
    evaluation = evaluate(workloads, FakeSource(level=float("nan")), spec())
    assert conditions(evaluation)["MetricsAvailable"] == ("False", "MissingMetrics")
    assert workloads.scaled == []


def test_a_target_scaled_to_zero_by_hand_is_not_scaled_up() -> None:
    workloads = FakeWorkloads(scale=Scale(0, 0, "app=web"))
    evaluate(workloads, FakeSource(level=3.0), spec())
    assert workloads.scaled == []


def test_a_failed_usage_read_for_the_scale_in_ranking_still_scales_in() -> None:
    def ranking_fails(scaler: ScalerRef, selector: str, source: MetricSource) -> None:
        raise MetricsError("Timeout", "Prometheus did not answer within 10 s")

    workloads = FakeWorkloads(scale=Scale(6, 6, "app=web"))
    evaluator = Evaluator(workloads, FakeSource(level=1.0), SETTINGS, rank_scale_in=ranking_fails)
    evaluation = evaluator.evaluate(REF, spec(), {}, ObjectRuntime(), NOW)
    assert workloads.scaled == [2]
    assert [e.reason for e in evaluation.events if e.type == "Warning"] == ["DeletionCostFailed"]


def test_the_scale_in_ranking_reads_usage_within_the_evaluations_budget() -> None:
    timeouts: list[float] = []
    ranked: list[tuple[ScalerRef, str]] = []

    def ranking(scaler: ScalerRef, selector: str, source: MetricSource) -> None:
        timeouts.append(source.timeout)
        ranked.append((scaler, selector))

    workloads = FakeWorkloads(scale=Scale(6, 6, "app=web"))
    settings = SETTINGS.model_copy(update={"evaluation_budget": 4.0})
    source = FakeSource(level=1.0, timeout=10.0)
    evaluator = Evaluator(workloads, source, settings, rank_scale_in=ranking)
    evaluator.evaluate(REF, spec(), {}, ObjectRuntime(), NOW)
    assert workloads.scaled == [2]
    assert len(timeouts) == 1
    assert 0.0 < timeouts[0] <= 4.0
    # The ranking names the scaler it ranks for, so its costs can go with it.
    assert ranked == [(ScalerRef("shop", "web"), "app=web")]


@pytest.mark.parametrize(
    ("api_version", "kind", "ranked"),
    [
        ("apps/v1", "Deployment", True),
        ("apps/v1", "ReplicaSet", True),
        ("example.com/v1", "StatefulSet", True),
        ("apps/v1", "StatefulSet", False),
    ],
)
def test_only_targets_that_honour_deletion_costs_are_ranked(
    api_version: str, kind: str, ranked: bool
) -> None:
    # A StatefulSet removes its highest ordinal whatever the pods' costs say.
    calls: list[ScalerRef] = []
    workloads = FakeWorkloads(scale=Scale(6, 6, "app=web"))
    evaluator = Evaluator(
        workloads,
        FakeSource(level=1.0),
        SETTINGS,
        rank_scale_in=lambda scaler, selector, source: calls.append(scaler),
    )
    target = {"apiVersion": api_version, "kind": kind, "name": "web"}
    evaluator.evaluate(REF, spec(scaleTargetRef=target), {}, ObjectRuntime(), NOW)
    assert workloads.scaled == [2]
    assert bool(calls) is ranked


def test_an_evaluation_that_raises_is_a_condition_and_an_event() -> None:
    class Broken(FakeWorkloads):
        def read_scale(self, namespace: str, target: ScaleTargetRef) -> Scale:
            raise RuntimeError("the adapter broke")

    workloads = Broken()
    evaluation = evaluate(workloads, FakeSource(), spec())
    assert conditions(evaluation)["Ready"] == ("False", "EvaluationFailed")
    assert "RuntimeError: the adapter broke" in evaluation.status["decision"]
    assert ("Warning", "EvaluationFailed") in {(e.type, e.reason) for e in evaluation.events}
    assert workloads.scaled == []


def test_a_window_beyond_any_date_is_an_invalid_spec() -> None:
    body = spec(forecast={"history": "999999d", "step": "999999h"})
    evaluation = evaluate(FakeWorkloads(), FakeSource(), body)
    assert conditions(evaluation)["Ready"] == ("False", "InvalidSpec")
    assert "spec.forecast.history" in evaluation.status["decision"]


def test_a_query_too_expensive_for_prometheus_is_refused_before_it_is_sent() -> None:
    attack = 'max_over_time(sum(rate(x{namespace="shop"}[8s]))[30d:10ms])'
    body = spec(metric={"query": attack, "targetPerReplica": "1"})
    prometheus = PrometheusSource("http://127.0.0.1:9", 1.0, scrape_interval=2.0)
    evaluation = evaluate(FakeWorkloads(), prometheus, body)
    assert conditions(evaluation)["Ready"] == ("False", "QueryTooExpensive")
    message = evaluation.status["decision"]
    assert "PREDICTIVE_SCALER_QUERY_MAX_SAMPLES" in message
    assert "[30d:10ms]" in message


def test_a_failed_reselection_is_in_the_status_while_the_model_in_use_forecasts() -> None:
    asked: list[tuple[RefreshRequest, Delivery]] = []

    def submit(request: RefreshRequest, deliver: Delivery, _may_wait: float) -> None:
        asked.append((request, deliver))

    workloads, source = FakeWorkloads(), FakeSource(level=2.0)
    evaluator = Evaluator(workloads, source, SETTINGS)
    runtime = ObjectRuntime(submit=submit)
    body = spec(forecast={"models": ["naive"], "history": "10m", "step": "1m", "refresh": "2m"})

    evaluator.evaluate(REF, body, {}, runtime, NOW)
    request, deliver = asked[0]
    deliver(refresh_model(request))
    selected = evaluator.evaluate(REF, body, {}, runtime, NOW + 30)
    assert "selectionFailure" not in selected.status["forecast"]

    evaluator.evaluate(REF, body, {}, runtime, NOW + 150)
    assert len(asked) == 2, "due again after the 2m refresh"
    asked[1][1](RuntimeError("the worker died"))
    failed = evaluator.evaluate(REF, body, {}, runtime, NOW + 180)

    assert failed.status["forecast"]["model"] == "naive"
    assert failed.status["forecast"]["selectionFailure"] == (
        "model selection failed: RuntimeError('the worker died'); "
        "1 failure in a row, tried again in 1m"
    )
    # (Each evaluation here starts from an empty status, so conditions post Events too.)
    notes = [e for e in failed.events if e.reason.startswith("Selection")]
    assert [(e.type, e.reason) for e in notes] == [("Warning", "SelectionFailed")]
    assert notes[0].message == failed.status["forecast"]["selectionFailure"]
    later = evaluator.evaluate(REF, body, {}, runtime, NOW + 210)
    assert "SelectionFailed" not in {e.reason for e in later.events}, "one Event per failure"
    assert workloads.scaled[-1] == 4


def test_a_load_that_leaves_the_forecast_is_an_event_and_a_selection_at_once() -> None:
    workloads, source = FakeWorkloads(), FakeSource(level=1.0, jump=(NOW + 150, 10.0))
    evaluator = Evaluator(workloads, source, SETTINGS)
    runtime = ObjectRuntime()
    body = spec(forecast={"models": ["holt"], "history": "1h", "step": "1m", "refresh": "1h"})
    for minute in range(3):
        calm = evaluator.evaluate(REF, body, {}, runtime, NOW + 60 * minute)
        assert "LoadLeftForecast" not in {e.reason for e in calm.events}
    reasons, forecasts = [], []
    for minute in range(3, 7):
        evaluation = evaluator.evaluate(REF, body, {}, runtime, NOW + 60 * minute)
        reasons.append([e for e in evaluation.events if e.reason == "LoadLeftForecast"])
        forecasts.append(evaluation.status["forecast"]["value"])
    # The samples at minutes 3, 4 and 5 are above the band: seen at minute 5.
    assert [len(r) for r in reasons] == [0, 0, 1, 0]
    assert reasons[2][0].type == "Normal"
    assert reasons[2][0].message.startswith("the load lay above the forecast's 90% band")
    assert forecasts[1] < 5.0, "the model in place trails the jump"
    assert forecasts[2] > 9.0, "the model selected again follows it"


def test_a_cycle_in_the_recent_window_is_in_the_status() -> None:
    workloads, source = FakeWorkloads(), FakeSource(level=2.0, burst_every=300.0)
    body = spec(forecast={"models": ["holt", "seasonal_naive"], "history": "3h", "step": "30s"})
    status = evaluate(workloads, source, body).status["forecast"]
    assert status["cycle"] == "5m"
    # Without it, nothing is said.
    calm = evaluate(FakeWorkloads(), FakeSource(level=2.0), body).status["forecast"]
    assert "cycle" not in calm


@dataclass
class RequestsOrCores(FakeSource):
    """About 200 requests a second for a query, about one core for the CPU shorthand."""

    def samples(self, series: LoadSeries, *, step: float, start: float, end: float) -> FloatArray:
        self.level = 200.0 if series.query else 1.0
        return super().samples(series, step=step, start=start, end=end)


def test_a_changed_metric_is_forecast_afresh_not_with_the_old_metrics_model() -> None:
    workloads, source = FakeWorkloads(), RequestsOrCores()
    evaluator = Evaluator(workloads, source, SETTINGS)
    runtime = ObjectRuntime()
    forecast = {"models": ["holt"], "history": "10m", "step": "1m", "refresh": "1h"}
    requests = {"query": 'sum(rate(http_requests_total{namespace="shop"}[2m]))'}
    by_requests = spec(metric={**requests, "targetPerReplica": "100"}, forecast=forecast)
    by_cores = spec(metric={"resource": "cpu", "targetPerReplica": "500m"}, forecast=forecast)

    before = evaluator.evaluate(REF, by_requests, {}, runtime, NOW)
    assert before.status["forecast"]["value"] == pytest.approx(200.0, rel=0.05)
    switched = evaluator.evaluate(REF, by_cores, {}, runtime, NOW + 60)

    # The requests' model, kept until its refresh an hour later, forecast 200 "cores"
    # and asked for 400 replicas of 500m.
    assert switched.status["forecast"]["value"] == pytest.approx(1.0, rel=0.05)
    assert workloads.scaled == [], "one core at 500m a replica is the 2 it runs"


@dataclass
class ResetAfterPatch(FakeWorkloads):
    """The scale patch lands, then the connection resets before the answer arrives."""

    resets: bool = True

    def patch_scale(self, namespace: str, target: ScaleTargetRef, replicas: int) -> None:
        super().patch_scale(namespace, target, replicas)
        self.scale = Scale(replicas, replicas, "app=web")
        if self.resets:
            raise ConnectionResetError("connection reset after the PATCH was sent")


ONE_POD_PER_TEN_MINUTES = {
    "scaleUp": {
        "stabilizationWindowSeconds": 0,
        "policies": [{"type": "Pods", "value": 1, "periodSeconds": 600}],
    }
}


def test_a_scale_that_landed_in_a_failed_evaluation_still_counts_against_the_policy() -> None:
    workloads, source = ResetAfterPatch(), FakeSource(level=4.0)
    evaluator = Evaluator(workloads, source, SETTINGS)
    runtime = ObjectRuntime()
    body = spec(scaling={"leadTime": "1m", "behavior": ONE_POD_PER_TEN_MINUTES})
    failed = evaluator.evaluate(REF, body, {}, runtime, NOW)
    assert conditions(failed)["Ready"] == ("False", "EvaluationFailed")
    assert workloads.scaled == [3]
    # The status as the API server holds it: the pending scale, then the failed report.
    status = {**workloads.statuses[-1], **failed.status}
    assert status["pendingScale"] is not None, "the failed evaluation leaves it pending"
    workloads.resets = False
    evaluator.evaluate(REF, body, status, runtime, NOW + 30)
    assert workloads.scaled == [3], "one pod per 10 minutes: the landed scale counts"


@dataclass
class RefusingWorkloads(FakeWorkloads):
    def patch_scale(self, namespace: str, target: ScaleTargetRef, replicas: int) -> None:
        raise ApiException(status=403, reason="Forbidden")


def test_a_refused_scale_is_a_condition_and_one_warning_not_one_each_period() -> None:
    workloads, source = RefusingWorkloads(), FakeSource(level=4.0)
    evaluator = Evaluator(workloads, source, SETTINGS)
    runtime = ObjectRuntime()
    body = spec()
    status: dict[str, Any] = {}
    refusals = []
    for turn in range(3):
        evaluation = evaluator.evaluate(REF, body, status, runtime, NOW + 30 * turn)
        status = {**status, **workloads.statuses[-1], **evaluation.status}
        refusals.append([e.message for e in evaluation.events if e.reason == "FailedRescale"])
        assert conditions(evaluation)["ScalingActive"] == ("False", "FailedRescale")
        assert conditions(evaluation)["Ready"] == ("False", "FailedRescale")
        assert status["pendingScale"] is not None, "a refused patch may still have landed"
    # Ready and ScalingActive turning, in one Event; nothing more while the refusal lasts.
    assert [len(said) for said in refusals] == [1, 0, 0]
    assert refusals[0][0].startswith("Ready is False: ")
    assert refusals[0][0].endswith("(also ScalingActive False)")


def test_a_hold_without_a_forecast_drops_the_old_forecasts_numbers_and_load() -> None:
    workloads, source = FakeWorkloads(), FakeSource(level=2.0)
    evaluator = Evaluator(workloads, source, SETTINGS)
    runtime = ObjectRuntime()
    body = spec()
    first = evaluator.evaluate(REF, body, {}, runtime, NOW)
    assert first.status["forecast"]["summary"]
    assert first.status["load"] == 2.0
    source.error = MetricsError("Unreachable", "Prometheus is down")
    held = evaluator.evaluate(REF, body, first.status, runtime, NOW + 3600)
    status = {**first.status, **held.status}
    # Merge-patched, None deletes: no two-hour-old forecast or load in `kubectl get psc`.
    assert status["load"] is None
    assert status["forecast"]["summary"] is None
    assert status["forecast"]["value"] is None
    assert status["forecast"]["model"] == "naive"


def sample(metric: str, **labels: str) -> float | None:
    value: float | None = REGISTRY.get_sample_value(
        metric, {"namespace": "shop", "name": "web", **labels}
    )
    return value


def test_series_an_evaluation_has_nothing_true_for_are_withdrawn_not_frozen() -> None:
    workloads, source = FakeWorkloads(), FakeSource(level=2.0)
    evaluator = Evaluator(workloads, source, SETTINGS)
    runtime = ObjectRuntime()
    budgeted = spec(metric={"resource": "cpu", "capacityPerReplica": "1"})
    evaluator.evaluate(REF, budgeted, {}, runtime, NOW)
    assert sample("predictive_scaler_overload_budget_ratio") == 0.01
    assert sample("predictive_scaler_forecast", bound="upper") is not None
    # The budget taken out of the spec: its series go with it.
    evaluator.evaluate(REF, spec(), {}, runtime, NOW + 60)
    assert sample("predictive_scaler_overload_budget_ratio") is None
    assert sample("predictive_scaler_forecast_quantile") is None
    # The target gone: no load, forecast or replica count stands for it any more.
    workloads.scale = None
    evaluator.evaluate(REF, spec(), {}, runtime, NOW + 120)
    assert sample("predictive_scaler_load") is None
    assert sample("predictive_scaler_forecast", bound="upper") is None
    for kind in ("current", "ready", "desired"):
        assert sample("predictive_scaler_replicas", kind=kind) is None
    # What the spec says still stands.
    assert sample("predictive_scaler_target_per_replica") == 0.5


def test_a_shadow_with_a_negative_fleet_reads_as_none_not_as_a_failure_later() -> None:
    written = evaluate(FakeWorkloads(), FakeSource(level=2.0), spec()).status["shadowState"]
    shadow = json.loads(written)
    assert previous_shadow({"shadowState": written}) is not None
    shadow["hpa_fleet"] = {"ready": -5, "starting": []}
    assert previous_shadow({"shadowState": json.dumps(shadow)}) is None
