from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest
from pydantic import ValidationError

from predictive_scaler.operator.cpus import usable_cores
from predictive_scaler.operator.prometheus import resource_query
from predictive_scaler.operator.resource import PredictiveScalerSpec
from predictive_scaler.operator.runtime import ObjectRuntime
from predictive_scaler.operator.settings import (
    OperatorSettings,
    SettingsError,
    misspelt_variables,
)
from predictive_scaler.operator.sources import LoadSeries

SPEC = {
    "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web.v2"},
    "maxReplicas": 8,
    "metric": {"resource": "cpu", "targetPerReplica": "350m"},
    "forecast": {"history": "1h", "step": "30s", "seasonality": "1d"},
    "scaling": {"leadTime": "0s"},
}


def test_spec_maps_onto_the_pure_scaling_spec() -> None:
    spec = PredictiveScalerSpec.from_body(SPEC)
    scaling = spec.scaling_spec()
    assert scaling.target_per_replica == pytest.approx(0.35)
    assert scaling.lead_time_seconds == 0
    assert (scaling.min_replicas, scaling.max_replicas) == (1, 8)
    assert spec.forecast.history_points == 121
    assert spec.forecast.season_length == 2880


def test_a_capacity_with_a_budget_maps_onto_a_budgeted_scaling_spec() -> None:
    body = {**SPEC, "metric": {"resource": "cpu", "capacityPerReplica": "500m"}}
    scaling = PredictiveScalerSpec.from_body(body).scaling_spec()
    assert scaling.budgeted
    assert scaling.per_replica == pytest.approx(0.5)
    assert scaling.overload_budget == 0.01
    body["scaling"] = {"overloadBudget": "2.5%"}
    assert PredictiveScalerSpec.from_body(body).scaling_spec().overload_budget == 0.025
    # An object without behavior runs the predictive default, not "no behavior".
    assert scaling.behavior is None
    assert scaling.effective_behavior.scale_down.stabilization_window_seconds == 300


@pytest.mark.parametrize(
    ("metric", "scaling", "words"),
    [
        ({"capacityPerReplica": "1", "targetPerReplica": "1"}, {}, "exactly one of"),
        ({}, {}, "exactly one of"),
        ({"capacityPerReplica": "0"}, {}, "capacityPerReplica must be positive"),
        ({"targetPerReplica": "1"}, {"overloadBudget": "1%"}, "needs metric.capacityPerReplica"),
        ({"capacityPerReplica": "1"}, {"overloadBudget": "0%"}, "overloadBudget must lie"),
        ({"capacityPerReplica": "1"}, {"overloadBudget": "51%"}, "overloadBudget must lie"),
        ({"capacityPerReplica": "1"}, {"overloadBudget": "0.01"}, "a percentage such as 1%"),
    ],
)
def test_sizing_fields_the_api_server_would_refuse_are_refused_here_too(
    metric: dict[str, str], scaling: dict[str, str], words: str
) -> None:
    body = {**SPEC, "metric": {"resource": "cpu", **metric}, "scaling": scaling}
    with pytest.raises(ValueError, match=words):
        PredictiveScalerSpec.from_body(body)


@pytest.mark.parametrize("metric", [{"resource": "cpu", "query": "up"}, {}])
def test_a_metric_needs_exactly_one_of_resource_and_query_as_the_crd_says(
    metric: dict[str, str],
) -> None:
    body = {**SPEC, "metric": {**metric, "targetPerReplica": "1"}}
    with pytest.raises(ValueError, match=r"exactly one of metric\.resource and metric\.query"):
        PredictiveScalerSpec.from_body(body)


@pytest.mark.parametrize("lead_time", ["0s", "00s", "000m", "0h"])
def test_a_zero_lead_time_is_zero_however_many_zeros_the_crd_lets_it_have(lead_time: str) -> None:
    spec = PredictiveScalerSpec.from_body({**SPEC, "scaling": {"leadTime": lead_time}})
    assert spec.scaling_spec().lead_time_seconds == 0


@pytest.mark.parametrize(
    ("written", "stored"),
    [("1e400", float(2**63 - 1)), ("1e-400", 1e-9), ("1n", 1e-9), ("500m", 0.5)],
)
def test_a_quantity_the_api_server_accepts_is_read_as_the_value_it_stores(
    written: str, stored: float
) -> None:
    # Kubernetes caps a quantity at 2^63 - 1 and rounds finer positive ones up to 1n:
    # read as a float, 1e400 was inf and 1e-400 was 0, and the object was refused.
    body = {**SPEC, "metric": {"resource": "cpu", "capacityPerReplica": written}}
    scaling = PredictiveScalerSpec.from_body(body).scaling_spec()
    assert scaling.per_replica == pytest.approx(stored)


def test_a_quantity_that_is_not_a_number_is_refused() -> None:
    body = {**SPEC, "metric": {"resource": "cpu", "targetPerReplica": "Infinity"}}
    with pytest.raises(ValueError, match="a quantity such as 500m"):
        PredictiveScalerSpec.from_body(body)


def test_min_above_max_is_refused_even_if_the_api_server_let_it_in() -> None:
    with pytest.raises(ValueError, match="minReplicas"):
        PredictiveScalerSpec.from_body({**SPEC, "minReplicas": 9}).scaling_spec()


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"forecast": {"history": "999999d", "step": "1s"}}, "spec.forecast.history"),
        ({"forecast": {"history": "4d", "step": "30s"}}, "11,000 per series"),
        ({"scaling": {"leadTime": "2h"}}, "spec.scaling.leadTime"),
        ({"forecast": {"longHistory": "60d", "longStep": "1m"}}, "spec.forecast.longHistory"),
        ({"forecast": {"step": "5m", "longStep": "1m"}}, "spec.forecast.longStep"),
        ({"forecast": {"history": "2d", "longHistory": "1d"}}, "spec.forecast.longHistory"),
        ({"forecast": {"seasonality": "7d", "longHistory": "10d"}}, "spec.forecast.seasonality"),
        ({"syncPeriod": "1s"}, "spec.syncPeriod: 1s is below the floor of 2s"),
        ({"syncPeriod": "61m"}, "spec.syncPeriod: 61m is above the ceiling of 1h"),
        (
            {"forecast": {"history": "3h", "step": "1s", "refresh": "30s"}},
            "spec.forecast.refresh: 30s is shorter than 37s",
        ),
    ],
)
def test_windows_that_would_exhaust_memory_are_refused_even_past_the_api_server(
    changes: dict[str, object], words: str
) -> None:
    with pytest.raises(ValueError, match=words):
        PredictiveScalerSpec.from_body({**SPEC, **changes})


def test_the_shortest_refresh_and_sync_period_are_accepted() -> None:
    forecast = {"history": "3h", "step": "1s", "refresh": "37s"}
    spec = PredictiveScalerSpec.from_body({**SPEC, "syncPeriod": "2s", "forecast": forecast})
    assert spec.sync_seconds == 2.0
    assert PredictiveScalerSpec.from_body({**SPEC, "syncPeriod": "1h"}).sync_seconds == 3600.0


def test_the_largest_history_prometheus_answers_is_accepted() -> None:
    spec = PredictiveScalerSpec.from_body({**SPEC, "forecast": {"history": "7d", "step": "1m"}})
    assert spec.forecast.history_points == 10_081


def test_the_long_history_defaults_to_two_weeks_and_a_day_at_five_minutes() -> None:
    forecast = PredictiveScalerSpec.from_body(SPEC).forecast
    assert forecast.long_history_points == 15 * 288 + 1
    assert forecast.long_step_seconds == 300.0
    assert forecast.seasonality_seconds == 86_400.0  # SPEC's 1d


def test_cpu_query_matches_the_deployments_pods_by_name_in_its_namespace() -> None:
    spec = PredictiveScalerSpec.from_body(SPEC)
    query = resource_query(spec.metric.resource, "shop", spec.scale_target_ref, rate_window=120)
    assert query == (
        'sum(rate(container_cpu_usage_seconds_total{namespace="shop",'
        'pod=~"web\\\\.v2-[a-z0-9]{1,10}-[a-z0-9]{5}",container!=""}[120s]))'
    )


def test_the_cached_forecaster_is_rebuilt_when_forecast_settings_or_the_series_change() -> None:
    runtime = ObjectRuntime()
    spec = PredictiveScalerSpec.from_body(SPEC)
    series = LoadSeries.of("shop", spec.scale_target_ref, spec.metric, "app=web", 120.0)
    first = runtime.selection_for(spec.forecast, series)
    assert runtime.selection_for(spec.forecast, series) is first
    # The same workload's pods under another selector are the same series.
    assert runtime.selection_for(spec.forecast, replace(series, pod_selector="app=w")) is first
    several = PredictiveScalerSpec.from_body({**SPEC, "forecast": {"models": ["holt", "ets"]}})
    rebuilt = runtime.selection_for(several.forecast, series)
    assert rebuilt is not first
    assert (rebuilt.model, rebuilt.candidates) == ("auto", ("holt", "ets"))
    memory = replace(series, resource="memory")
    assert runtime.selection_for(several.forecast, memory) is not rebuilt


def test_settings_name_every_bad_variable() -> None:
    with pytest.raises(SettingsError) as bad:
        OperatorSettings.from_environment(
            {"PREDICTIVE_SCALER_METRICS_PORT": "70000", "PREDICTIVE_SCALER_SCRAPE_INTERVAL": "soon"}
        )
    lines = str(bad.value).splitlines()
    assert any(line.startswith("PROMETHEUS_URL:") and "is not set" in line for line in lines)
    assert any(line.startswith("PREDICTIVE_SCALER_METRICS_PORT:") for line in lines)
    assert any(line.startswith("PREDICTIVE_SCALER_SCRAPE_INTERVAL:") for line in lines)


def test_settings_parse_durations_and_namespace_lists() -> None:
    settings = OperatorSettings.from_environment(
        {
            "PROMETHEUS_URL": "http://prometheus:9090/",
            "PREDICTIVE_SCALER_NAMESPACES": "shop, web ,",
            "PREDICTIVE_SCALER_SCRAPE_INTERVAL": "15s",
        }
    )
    assert settings.namespaces == ("shop", "web")
    assert settings.scrape_interval == 15
    assert settings.prometheus == "http://prometheus:9090"


def test_the_rebalance_settle_is_three_rate_windows_unless_set() -> None:
    base = {"PROMETHEUS_URL": "http://prometheus:9090", "PREDICTIVE_SCALER_SCRAPE_INTERVAL": "30s"}
    assert OperatorSettings.from_environment(base).rebalance_settle_seconds == 360
    chosen = OperatorSettings.from_environment({**base, "PREDICTIVE_SCALER_REBALANCE_SETTLE": "2m"})
    assert chosen.rebalance_settle_seconds == 120


def test_lease_timings_in_the_wrong_order_are_refused_naming_all_three() -> None:
    with pytest.raises(SettingsError) as bad:
        OperatorSettings.from_environment(
            {
                "PROMETHEUS_URL": "http://prometheus:9090",
                "PREDICTIVE_SCALER_LEASE_DURATION": "10",
                "PREDICTIVE_SCALER_LEASE_RENEW_DEADLINE": "10",
            }
        )
    message = str(bad.value)
    for name in ("LEASE_DURATION", "LEASE_RENEW_DEADLINE", "LEASE_RETRY_PERIOD"):
        assert f"PREDICTIVE_SCALER_{name}" in message


def test_the_failover_bound_is_a_lease_duration_and_a_retry_period() -> None:
    settings = OperatorSettings.from_environment({"PROMETHEUS_URL": "http://prometheus:9090"})
    assert settings.leader_election == ""
    assert settings.lease_timings.failover_bound == 15 + 2


def test_selection_workers_follow_the_cpu_limit_unless_set(tmp_path: Path) -> None:
    (tmp_path / "cpu.max").write_text("150000 100000\n")
    assert usable_cores(tmp_path) == min(2, len(os.sched_getaffinity(0)))
    (tmp_path / "cpu.max").write_text("max 100000\n")
    assert usable_cores(tmp_path) == len(os.sched_getaffinity(0))
    settings = OperatorSettings.from_environment(
        {"PROMETHEUS_URL": "http://p:9090", "PREDICTIVE_SCALER_SELECTION_WORKERS": ""}
    )
    assert settings.selection_workers == 0
    assert settings.selection_processes >= 1
    pinned = OperatorSettings.from_environment(
        {
            "PROMETHEUS_URL": "http://p:9090",
            "PREDICTIVE_SCALER_SELECTION_WORKERS": "3",
            "PREDICTIVE_SCALER_SELECTION_BUDGET": "2s",
        }
    )
    assert pinned.selection_processes == 3
    assert pinned.selection_budget == 2.0


def test_a_cgroup_v1_quota_is_read_too(tmp_path: Path) -> None:
    (tmp_path / "cpu").mkdir()
    (tmp_path / "cpu" / "cpu.cfs_quota_us").write_text("50000\n")
    (tmp_path / "cpu" / "cpu.cfs_period_us").write_text("100000\n")
    assert usable_cores(tmp_path) == 1


@pytest.mark.parametrize("weights", ["cpu=1,network=1", "disk=2", "cpu=1,memory=1,gpu=1"])
def test_a_weight_on_a_metric_the_operator_does_not_measure_is_refused(weights: str) -> None:
    with pytest.raises(SettingsError) as bad:
        OperatorSettings.from_environment(
            {
                "PROMETHEUS_URL": "http://prometheus:9090",
                "PREDICTIVE_SCALER_REBALANCE_WEIGHTS": weights,
            }
        )
    (line,) = str(bad.value).splitlines()
    assert line.startswith("PREDICTIVE_SCALER_REBALANCE_WEIGHTS:")
    assert "no usage is measured for" in line
    assert "cpu and memory only" in line


def test_the_default_weights_are_the_measured_metrics() -> None:
    settings = OperatorSettings.from_environment({"PROMETHEUS_URL": "http://prometheus:9090"})
    assert settings.rebalance_weights == {"cpu": 1.0, "memory": 1.0}


@pytest.mark.parametrize(
    ("api_version", "kind", "accepted"),
    [
        ("apps/v1", "Deployment", True),
        ("argoproj.io/v1alpha1", "Rollout", True),
        ("v1", "ConfigMap", True),
        ("apps/v1/x", "Deployment", False),
        ("apps/v1", "deploy ment", False),
    ],
)
def test_any_kind_may_be_targeted_but_not_a_malformed_one(
    api_version: str, kind: str, accepted: bool
) -> None:
    body = {**SPEC, "scaleTargetRef": {"apiVersion": api_version, "kind": kind, "name": "web"}}
    if accepted:
        assert PredictiveScalerSpec.from_body(body).scale_target_ref.kind == kind
    else:
        with pytest.raises(ValidationError):
            PredictiveScalerSpec.from_body(body)


@pytest.mark.parametrize(
    ("variables", "words"),
    [
        ({"PREDICTIVE_SCALER_REBALANCE_NODES": "a in ("}, "PREDICTIVE_SCALER_REBALANCE_NODES"),
        ({"PREDICTIVE_SCALER_LIVENESS_PORT": "8000"}, "need a port each"),
    ],
)
def test_settings_that_would_fail_only_once_running_are_refused_at_start_up(
    variables: dict[str, str], words: str
) -> None:
    with pytest.raises(SettingsError, match=words):
        OperatorSettings.from_environment({"PROMETHEUS_URL": "http://p:9090", **variables})


@pytest.mark.parametrize("zero", ["0", "0s", "00m", "off"])
def test_a_cooldown_of_zero_may_be_written_as_any_zero(zero: str) -> None:
    settings = OperatorSettings.from_environment(
        {"PROMETHEUS_URL": "http://p:9090", "PREDICTIVE_SCALER_REBALANCE_COOLDOWN": zero}
    )
    assert settings.rebalance_cooldown == 0


def test_a_zero_scrape_interval_is_still_refused() -> None:
    with pytest.raises(SettingsError, match="PREDICTIVE_SCALER_SCRAPE_INTERVAL"):
        OperatorSettings.from_environment(
            {"PROMETHEUS_URL": "http://p:9090", "PREDICTIVE_SCALER_SCRAPE_INTERVAL": "0s"}
        )


def test_a_near_miss_of_a_setting_is_named_with_the_setting_it_nearly_spells() -> None:
    environ = {
        "PREDICTIVE_SCALER_NAMESPACE": "shop",
        "PREDICTIVE_SCALER_REBALANCE_MOD": "Off",
        # The local cluster's env file shares the prefix; none of it reads as a typo.
        "PREDICTIVE_SCALER_METRICS_SERVER_PORT": "4443",
        "PREDICTIVE_SCALER_APISERVER_URL": "https://127.0.0.1:6443",
        "PREDICTIVE_SCALER_ETCD_PORT": "2379",
        "PREDICTIVE_SCALER_PROMETHEUS_PORT": "9090",
        "PREDICTIVE_SCALER_NAMESPACES": "shop",
        "PREDICTIVE_SCALER_PROMETHEUS_URL": "http://prometheus:9090",
    }
    assert misspelt_variables(environ) == [
        "PREDICTIVE_SCALER_NAMESPACE is not a setting and is ignored: "
        "did you mean PREDICTIVE_SCALER_NAMESPACES?",
        "PREDICTIVE_SCALER_PROMETHEUS_URL is not a setting and is ignored: "
        "did you mean PROMETHEUS_URL?",
        "PREDICTIVE_SCALER_REBALANCE_MOD is not a setting and is ignored: "
        "did you mean PREDICTIVE_SCALER_REBALANCE_MODE?",
    ]
