"""`predictive-scaler demo` as a user runs it: replay, summary, plot, and nothing left behind."""

from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

from kubernetes import client
from kubernetes.client.exceptions import ApiException

import predictive_scaler.localcluster as local
from predictive_scaler.demo.scenario import NAMESPACE
from predictive_scaler.demo.session import SCRAPE_TARGET
from predictive_scaler.localcluster import processes
from tests.fixtures.cluster import wait_for

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def demo(
    output: Path, log: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "predictive_scaler", "demo", "--output", str(output), *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
        )


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


def test_the_demo_scales_ahead_reports_against_the_baseline_and_cleans_up(
    local_cluster: local.LocalCluster, crd: str, core_v1: client.CoreV1Api, tmp_path: Path
) -> None:
    output, log = tmp_path / "out", tmp_path / "demo.log"
    # 07:00-13:00, the morning ramp: 24 steps in 48 s.
    running = demo(output, log, "--start-hour", "7", "--hours", "6")
    running.wait(timeout=300)
    text = log.read_text()
    assert running.returncode == 0, text
    assert "reusing the local cluster" in text
    assert "[07:" in text  # the view, one line at a time without a terminal
    assert "reactive HPA (replayed)" in text

    summary = json.loads((output / "summary.json").read_text())
    for side in ("operator", "baseline"):
        figures = summary[side]
        assert all(math.isfinite(float(v)) for v in figures.values()), figures
        assert figures["replica_minutes"] > 0
    # The load doubles over the morning: the operator had to scale up, as the baseline did.
    assert summary["operator"]["scaling_actions"] > 0
    assert summary["operator_peak_replicas"] > 5
    assert (output / "demo.png").read_bytes()[:8] == PNG_SIGNATURE

    assert not pid_alive(operator_pid(text))
    assert not (local_cluster.layout.scrape_targets / f"{SCRAPE_TARGET}.json").exists()
    wait_for(lambda: namespace_going(core_v1), what=f"namespace {NAMESPACE} deleted")
    assert local.connect(local_cluster.run_dir) is not None  # a reused cluster stays up
    wait_for(lambda: _namespace_gone(core_v1), timeout=120, what=f"{NAMESPACE} gone")


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
    running = demo(output, log, env={"PREDICTIVE_SCALER_RUN_DIR": str(run_dir)})
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
    running.wait(timeout=120)
    text = log.read_text()
    assert running.returncode == 130, text
    assert "interrupted" in text
    assert not pid_alive(operator)
    assert not any(processes.is_alive(p) for p in started)
    assert not run_dir.exists()
    assert "summary over" not in text  # interrupted: no figures pretending to be complete
