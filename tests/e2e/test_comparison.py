"""The shadow HPA on a real trace: it runs what the replay runs, and the operator says it loses.

A PredictiveScaler scales a Deployment while a real trace drives its pods'
CPU, and the operator is killed and restarted half-way. The shadow HPA the
operator advances on every evaluation must agree exactly with
:func:`simulation.replay` of the same samples read back from Prometheus (a
shadow that restarted would not), and its figures must reach status,
metrics, ``kubectl get`` and ``kubectl describe``.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from kubernetes import client

import predictive_scaler_dev.localcluster as local
from predictive_scaler.operator.prometheus import PrometheusSource
from predictive_scaler.operator.resource import GROUP, PLURAL, VERSION, PredictiveScalerSpec
from predictive_scaler.operator.settings import recent_rate_window
from predictive_scaler.operator.sources import LoadSeries
from predictive_scaler.scaling import ScalingState
from predictive_scaler.simulation import replay
from predictive_scaler.simulation.shadow import ShadowState
from predictive_scaler.simulation.tallies import WINDOWS
from predictive_scaler_dev.demo.load import LoadDriver
from predictive_scaler_dev.demo.process import OperatorProcess
from predictive_scaler_dev.localcluster.kube import deployment_manifest
from tests.fixtures.cluster import PrometheusQuery, create_deployment, wait_for, wait_for_read
from tests.fixtures.load import SECONDS_PER_STEP, nasa_morning, replay_curve
from tests.fixtures.operator import (
    condition,
    events_for,
    kubectl,
    read_status,
    replicas,
    samples,
    scaler,
)

STEP = 2.0  # the scaler fixture's spec.forecast.step
INITIAL = 2  # the Deployment's replicas when the shadow takes over


def shadow_of(status: dict[str, Any]) -> ShadowState:
    return ShadowState.from_json(json.loads(status["shadowState"]))


def test_the_shadow_hpa_runs_what_the_replay_runs_across_a_crash_and_shows_the_saving(
    operator: OperatorProcess,
    local_cluster: local.LocalCluster,
    core_v1: client.CoreV1Api,
    apps_v1: client.AppsV1Api,
    custom_objects: client.CustomObjectsApi,
    namespace: str,
    traces_dir: Path,
    prometheus_query: PrometheusQuery,
) -> None:
    curve = nasa_morning(traces_dir)
    duration = (curve.size - 1) * SECONDS_PER_STEP
    create_deployment(apps_v1, namespace, "web", INITIAL, cpu_request="1")
    # The shadow HPA targets 0.5 core, half of what a pod serves (its request).
    body = scaler(
        "web",
        "web",
        metric={"resource": "cpu", "targetPerReplica": "500m"},
        min_replicas=INITIAL,
        max_replicas=12,
        comparison={"hpaTargetUtilization": "50%"},
    )
    custom_objects.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, body)

    started: list[float] = []

    def crash_and_restart() -> None:
        # The shadow lives in status: an operator killed mid-way must carry it on.
        started.append(shadow_of(read_status(custom_objects, namespace, "web")).since)
        operator.kill()
        operator.start()

    driver = replay_curve(core_v1, apps_v1, namespace, "web", curve, midway=crash_and_restart)
    assert not driver.errors, driver.errors

    status = read_status(custom_objects, namespace, "web")
    shadow = shadow_of(status)
    assert [shadow.since] == started
    spec = PredictiveScalerSpec.from_body(body["spec"])
    shadow_spec = spec.shadow_spec()
    # The samples the shadow consumed, read back as the operator reads them.
    window = recent_rate_window(STEP, local_cluster.scrape_interval_seconds)
    series = LoadSeries.of(namespace, spec.scale_target_ref, spec.metric, "app=web", window)
    prometheus = PrometheusSource(local_cluster.prometheus_url, timeout=10.0)
    load = prometheus.samples(series, step=STEP, start=shadow.since, end=shadow.consumed_until)
    assert np.isfinite(load).sum() > duration / STEP * 0.8, "too few samples were counted"
    policy = shadow_spec.policy(ScalingState())
    expected = replay(load, policy, policy.config, initial=INITIAL)

    week = shadow.tallies.figures(WINDOWS[2], shadow.consumed_until)
    assert week.minutes == pytest.approx((load.size - 1) * STEP / 60.0)
    assert week.costs["hpa"].replica_minutes == pytest.approx(
        expected.outcome.replica_minutes, abs=1e-6
    )
    assert week.costs["hpa"].overload_minutes == pytest.approx(
        expected.outcome.overload_minutes, abs=1e-6
    )
    assert shadow.hpa_replicas == int(expected.replicas[-1])
    # The trace needed scaling: the HPA went past the first replicas.
    assert expected.replicas.max() > INITIAL

    assert_status_shows_the_saving(status)
    assert_metrics_match_status(operator, custom_objects, namespace)
    prometheus_query(
        f'predictive_scaler_replicas{{namespace="{namespace}",name="web",kind="shadow_hpa"}}',
        bool,
    )
    assert_kubectl_shows_the_saving(local_cluster, namespace)


def assert_status_shows_the_saving(status: dict[str, Any]) -> None:
    comparison = status["comparison"]
    assert comparison["hpaReplicas"] == shadow_of(status).hpa_replicas
    day = next(w for w in comparison["windows"] if w["window"] == "24h")
    ours, theirs = day["predictive"]["replicaMinutes"], day["hpa"]["replicaMinutes"]
    assert ours > 0
    # Whole percents of figures status rounds to a thousandth of a minute.
    assert re.fullmatch(r"[+-]\d+%", comparison["saved"])
    assert abs(int(comparison["saved"][:-1]) - (ours / theirs - 1) * 100) <= 0.51
    assert comparison["summary"].startswith("over the last 24h")
    assert 0.0 <= day["forecastCoverage"] <= 1.0
    assert day["forecastError"] >= 0.0


def assert_metrics_match_status(
    operator: OperatorProcess, custom_objects: client.CustomObjectsApi, namespace: str
) -> None:
    """The exported hour of the shadow HPA lies between two reads of status (it only grows).

    An evaluation publishes its metrics just before its status is written, so a read
    can fall between the two: the bracket is tried again until one holds.
    """

    def hour() -> float:
        windows = read_status(custom_objects, namespace, "web")["comparison"]["windows"]
        return float(next(w for w in windows if w["window"] == "1h")["hpa"]["replicaMinutes"])

    labels = (("name", "web"), ("namespace", namespace), ("scaler", "hpa"), ("window", "1h"))

    def bracket() -> tuple[float, float, float]:
        return hour(), samples(operator, "predictive_scaler_replica_minutes")[labels], hour()

    wait_for_read(
        bracket,
        lambda found: found[0] - 1e-3 <= found[1] <= found[2] + 1e-3,
        what="the exported hour between two status reads (before, exported, after)",
    )


def assert_kubectl_shows_the_saving(cluster: local.LocalCluster, namespace: str) -> None:
    header, row = kubectl(cluster, "get", "psc", "web", "-n", namespace).splitlines()
    # Columns are left-aligned under their headers (and some values hold spaces).
    at = header.index("SAVED")
    assert re.fullmatch(r"[+-]\d+%", row[at:].split()[0]), row
    described = kubectl(cluster, "describe", "psc", "web", "-n", namespace)
    for part in ("Comparison:", "Hpa Replicas:", "Saved:", "over the last 24h"):
        assert part in described, part


def test_a_workload_worse_than_the_shadow_hpa_says_so_and_follows_it_when_asked(
    operator: OperatorProcess,
    core_v1: client.CoreV1Api,
    apps_v1: client.AppsV1Api,
    custom_objects: client.CustomObjectsApi,
    namespace: str,
) -> None:
    """GM(1,1) on a steep ramp, with pods that start far slower than the lead time says.

    A model alone would not do it reliably. Sized by targetPerReplica, none of
    324 offline replays (gm11, grey_es, holt, naive, brown, gbdt on noisy,
    spiky, periodic loads and NASA slices) was worse than the HPA on both
    counts: the policy's reactive floor keeps replicas at or above the HPA's.
    With an overload budget gm11 was in about one replay in five. Pods that
    take 40 s against a 6 s lead time overload the workload where the shadow,
    modelled with the 6 s, does not, while GM(1,1)'s exponential bounds cost
    more replicas.
    """
    manifest = deployment_manifest("slow", INITIAL, cpu_request="1", startup_delay="40s")
    apps_v1.create_namespaced_deployment(namespace, manifest)  # type: ignore[arg-type]
    body = scaler(
        "slow",
        "slow",
        metric={"resource": "cpu", "targetPerReplica": "500m"},
        min_replicas=INITIAL,
        max_replicas=30,
        comparison={"hpaTargetUtilization": "50%", "whenWorseThanReactive": "FollowHPA"},
    )
    body["spec"]["forecast"]["models"] = ["gm11"]
    custom_objects.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, body)
    rng = np.random.default_rng(7)
    noise = rng.normal(1.0, 0.1, 1000)

    def ramp(seconds: float) -> float:
        return float(min(8.0, 0.8 * math.exp(seconds / 60.0)) * noise[int(seconds) % noise.size])

    with LoadDriver(core_v1, apps_v1, namespace, "slow", ramp) as driver:
        # The verdict needs 60 steps (2 min) of load in the window; it is judged on the
        # read that found it, as a later evaluation may turn it again.
        reliable = wait_for_read(
            lambda: condition(read_status(custom_objects, namespace, "slow"), "ForecastReliable"),
            lambda found: found.get("reason") == "WorseThanReactive",
            timeout=300,
            what="ForecastReliable=False/WorseThanReactive",
        )
        assert reliable["status"] == "False"
        assert "following the shadow HPA" in reliable["message"]

        def warned() -> list[Any]:
            found = events_for(core_v1, namespace, "slow")
            return [e for e in found if e.reason == "WorseThanReactive"]

        # The status is written in the evaluation; its Event is posted after it, by
        # kopf's event queue: seen in the status, the Event may not be there yet.
        wait_for(lambda: bool(warned()), timeout=60, what="a WorseThanReactive Event")
        assert warned()[0].type == "Warning"

        def follows() -> bool:
            now = read_status(custom_objects, namespace, "slow")
            shadow = now["comparison"]["hpaReplicas"]
            return bool(
                now["decision"].startswith("following the shadow HPA")
                and replicas(apps_v1, namespace, "slow") == shadow
            )

        wait_for(follows, timeout=60, what="the workload at the shadow HPA's replicas")
    assert not driver.errors, driver.errors
