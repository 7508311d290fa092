"""`predictive-scaler demo` as a user runs it: replay, summary, plot, and nothing left behind."""

from __future__ import annotations

import contextlib
import datetime
import json
import math
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from kubernetes import client
from kubernetes.client.exceptions import ApiException

import predictive_scaler_dev.localcluster as local
from predictive_scaler.operator.prometheus import resource_query
from predictive_scaler.operator.resource import ScaleTargetRef
from predictive_scaler.promclient import connect
from predictive_scaler.simulation.elasticity import METRICS
from predictive_scaler.units import format_duration
from predictive_scaler_dev.demo.history import CPU_COUNTER
from predictive_scaler_dev.demo.scenario import NAMESPACE, WORKLOAD, Scenario
from predictive_scaler_dev.demo.session import SCRAPE_TARGET
from predictive_scaler_dev.localcluster import processes
from tests.fixtures.cluster import wait_for
from tests.fixtures.operator import condition, read_status

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# What an interrupted demo gets to delete its objects and stop a cluster of its own.
DEMO_CLEAN_UP_SECONDS = 120


@contextlib.contextmanager
def demo(
    output: Path, log: Path, *args: str, env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """The demo running; on the way out, interrupted as Ctrl-C would (it then cleans up)."""
    with log.open("wb") as out:
        running = subprocess.Popen(
            [sys.executable, "-m", "predictive_scaler", "demo", "--output", str(output), *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
        )
    try:
        yield running
    finally:
        if running.poll() is None:
            running.send_signal(signal.SIGINT)
            try:
                running.wait(timeout=DEMO_CLEAN_UP_SECONDS)
            except subprocess.TimeoutExpired:
                running.kill()
                running.wait()


def operator_pid(text: str) -> int:
    found = re.search(r"operator started \(pid (\d+)", text)
    assert found, text
    return int(found.group(1))


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); its state letter says it is done.
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def namespace_going(core: client.CoreV1Api) -> bool:
    try:
        found = core.read_namespace(NAMESPACE)
    except ApiException as error:
        return bool(error.status == 404)
    return bool(found.metadata is not None and found.metadata.deletion_timestamp is not None)


def seasons_learnt(custom: client.CustomObjectsApi, season: str) -> bool:
    """The scaler has its season from the backfilled days, not LearningSeasons."""
    try:
        status = read_status(custom, NAMESPACE, WORKLOAD)
    except ApiException:
        return False  # not created yet: Prometheus is still loading the history
    seasons = status.get("forecast", {}).get("seasons", {})
    reliable = condition(status, "ForecastReliable")
    return seasons.get("found") == [season] and reliable.get("reason") == "ModelSelected"


def raw_samples(base_url: str, selector: str, window: str) -> list[tuple[float, float]]:
    found: Any = connect(base_url).custom_query(f"{selector}[{window}]")
    assert len(found) == 1, found
    return [(float(t), float(v)) for t, v in found[0]["values"]]


def test_the_demo_scales_ahead_reports_against_the_baseline_and_cleans_up(
    local_cluster: local.LocalCluster,
    crd: str,
    core_v1: client.CoreV1Api,
    custom_objects: client.CustomObjectsApi,
    tmp_path: Path,
) -> None:
    output, log = tmp_path / "out", tmp_path / "demo.log"
    # 07:00-13:00, the morning ramp: 24 steps in 48 s, after 2 days and 7 h of history.
    scenario = Scenario(start_hour=7, hours=6)
    # Days of backfilled history: the compressed day is a season from the first selection.
    season = format_duration(scenario.day_seconds)
    with demo(output, log, "--start-hour", "7", "--hours", "6") as running:
        wait_for(
            lambda: seasons_learnt(custom_objects, season) or running.poll() is not None,
            timeout=240,
            what=f"the scaler to learn its {season} season from the backfilled history",
        )
        assert running.poll() is None, log.read_text()
        running.wait(timeout=300)
    text = log.read_text()
    assert running.returncode == 0, text
    assert "reusing the local cluster" in text
    backfilled = re.search(r"backfilling .* as pod (\S+)", text)
    assert backfilled, text
    # The view, one line at a time without a terminal; it starts with the scaler, whose
    # creation waits for Prometheus's block reload, so its first line's clock varies.
    assert re.search(r"^\[1[0-2]:\d\d\] load", text, re.MULTILINE), text
    assert "reactive HPA (replayed)" in text
    assert "HPA controller (measured)" in text
    assert "KEDA, Prometheus (measured)" in text

    summary = json.loads((output / "summary.json").read_text())
    for side in ("operator", "baseline", "hpa", "keda"):
        check_figures(summary[side])
    # The load doubles over the morning: the operator had to scale up, as the baseline did.
    assert summary["operator"]["scaling_actions"] > 0
    assert summary["operator_peak_replicas"] > 5
    # The real HPA controller scaled its own Deployment for the same ramp, through
    # metrics-server; the demo deleted it with the namespace.
    initial = scenario.initial_replicas(scenario.load())
    assert summary["hpa"]["scaling_actions"] > 0
    assert summary["hpa_peak_replicas"] > initial
    # And KEDA its own, through its Prometheus scaler and external.metrics.k8s.io.
    assert summary["keda"]["scaling_actions"] > 0
    assert summary["keda_peak_replicas"] > initial
    assert (output / "demo.png").read_bytes()[:8] == PNG_SIGNATURE
    # The operator's log says what it did, as its Events do.
    operator_log = (output / "operator.log").read_text()
    assert re.search(rf"\[{NAMESPACE}/{WORKLOAD}\] Scaled: ", operator_log), operator_log[-3000:]

    assert not pid_alive(operator_pid(text))
    assert not (local_cluster.layout.scrape_targets / f"{SCRAPE_TARGET}.json").exists()
    wait_for(lambda: namespace_going(core_v1), what=f"namespace {NAMESPACE} deleted")
    assert local.connect(local_cluster.run_dir) is not None  # a reused cluster stays up
    wait_for(lambda: _namespace_gone(core_v1), timeout=120, what=f"{NAMESPACE} gone")

    # Prometheus holds the whole backfilled range, and the scaler's query reads it and the
    # live pods' load as one curve: no gap or double count where one hands over to the other.
    url = local_cluster.prometheus_url
    past = raw_samples(url, f'{CPU_COUNTER}{{pod="{backfilled.group(1)}"}}', "30m")
    step = scenario.seconds_per_step
    assert past[-1][0] - past[0][0] >= scenario.past_load().size * step
    counter = np.array([value for _, value in past])
    handed_over = past[int(np.flatnonzero(np.diff(counter) > 0)[-1]) + 1][0]
    target = ScaleTargetRef(api_version="apps/v1", kind="Deployment", name=WORKLOAD)
    window = 4 * local_cluster.scrape_interval_seconds
    query = resource_query("cpu", NAMESPACE, target, window)
    read = connect(url).custom_query_range(
        query,
        start_time=_utc(handed_over - window),
        end_time=_utc(handed_over + 2 * window),
        step=f"{step:g}s",
    )
    load = np.concatenate([scenario.past_load(), scenario.load()])
    first_live = scenario.past_load().size
    for at, value in read[0]["values"]:
        steps = round((float(at) - handed_over) / step)
        expected = load[first_live + steps - round(window / step) : first_live + steps].mean()
        assert abs(float(value) / expected - 1) < 0.3, (float(at) - handed_over, value, expected)


def check_figures(side: dict[str, Any]) -> None:
    figures = dict(side)
    elasticity = figures.pop("elasticity")
    assert all(math.isfinite(float(v)) for v in figures.values()), figures
    assert figures["replica_minutes"] > 0
    # The SPEC RG metrics, in percent; shares of time cannot pass 100.
    assert set(elasticity) == set(METRICS), elasticity
    assert all(elasticity[m] >= 0.0 for m in METRICS), elasticity
    shares = ("under_timeshare", "over_timeshare", "instability")
    assert all(elasticity[m] <= 100.0 for m in shares), elasticity


def _utc(epoch: float) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(epoch, tz=datetime.UTC)


def _namespace_gone(core: client.CoreV1Api) -> bool:
    try:
        core.read_namespace(NAMESPACE)
    except ApiException as error:
        return bool(error.status == 404)
    return False


def test_ctrl_c_stops_the_demo_and_its_own_cluster_leaving_nothing_running(
    local_cluster: local.LocalCluster, tmp_path: Path
) -> None:
    """On a cluster of its own (its own run directory), so that it is the demo's to stop."""
    run_dir = tmp_path / "run"
    output, log = tmp_path / "out", tmp_path / "demo.log"
    try:
        with demo(output, log, env={"PREDICTIVE_SCALER_RUN_DIR": str(run_dir)}) as running:
            wait_for(
                lambda: "replaying" in log.read_text() or running.poll() is not None,
                timeout=240,
                what="the demo to start replaying",
            )
            assert running.poll() is None, log.read_text()
            state = local.read_state(run_dir)
            assert state is not None
            started = state.processes
            assert started
            operator = operator_pid(log.read_text())

            running.send_signal(signal.SIGINT)
            running.wait(timeout=DEMO_CLEAN_UP_SECONDS)
    finally:
        if run_dir.exists():
            # Failed before the demo stopped its cluster: stop it here, as `hack/cluster down`.
            local.down(run_dir)
    text = log.read_text()
    assert running.returncode == 130, text
    assert "interrupted" in text
    assert not pid_alive(operator)
    assert not any(processes.is_alive(p) for p in started)
    assert not run_dir.exists()
    assert "summary over" not in text  # interrupted: no figures pretending to be complete
