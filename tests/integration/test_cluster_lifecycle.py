"""`up` and `down` on their own run directories: failures leave nothing behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import predictive_scaler_dev.localcluster as local
from predictive_scaler_dev.localcluster import processes
from tests.fixtures.cluster import wait_for


def test_failed_up_stops_what_it_started_and_down_removes_the_state(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    broken = local.ClusterConfig(
        run_dir=run_dir,
        nodes=1,
        timeout_seconds=60,
        extra_args={"kube-apiserver": ("--no-such-flag",)},
    )
    try:
        with pytest.raises(processes.ComponentFailedError, match="kube-apiserver"):
            local.up(broken)

        state = local.read_state(run_dir)
        assert state is not None
        assert state.phase is local.Phase.FAILED
        assert [p.name for p in state.processes] == ["etcd", "kube-apiserver"]
        assert not any(processes.is_alive(p) for p in state.processes)
        assert "unknown flag" in (state.error or "")
        assert local.status(run_dir).healthy is False

        local.down(run_dir)
        assert not run_dir.exists()
    finally:
        _down_if_left(run_dir)


def test_down_stops_the_processes_of_an_up_that_was_killed(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    command = [
        sys.executable,
        "-m",
        "predictive_scaler_dev.localcluster",
        "--run-dir",
        str(run_dir),
    ]
    upping = subprocess.Popen(
        [*command, "up", "--nodes", "1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        try:

            def apiserver_started() -> bool:
                try:
                    state = local.read_state(run_dir)
                except ValueError:  # caught while being replaced
                    return False
                return state is not None and "kube-apiserver" in {p.name for p in state.processes}

            wait_for(apiserver_started, timeout=120, what="up to start kube-apiserver")
        finally:
            os.killpg(upping.pid, signal.SIGKILL)
            upping.wait()

        state = local.read_state(run_dir)
        assert state is not None
        assert state.phase is local.Phase.STARTING
        orphans = [p for p in state.processes if processes.is_alive(p)]
        assert {p.name for p in orphans} >= {"etcd"}

        stopped = local.down(run_dir)
        assert {s.name for s in stopped} == {p.name for p in state.processes}
        assert not any(processes.is_alive(p) for p in state.processes)
        assert not run_dir.exists()
    finally:
        _down_if_left(run_dir)


def test_a_stopped_component_shows_in_status_and_restarts_with_its_command(
    local_cluster: local.LocalCluster,
) -> None:
    before = local.read_state(local_cluster.run_dir)
    assert before is not None
    old = next(p for p in before.processes if p.name == "prometheus")
    try:
        stopped = local.stop_component(local_cluster.run_dir, "prometheus")
        assert stopped.how == "terminated"
        report = local.status(local_cluster.run_dir)
        prometheus = next(c for c in report.components if c.name == "prometheus")
        assert not prometheus.running
        assert not report.healthy
    finally:
        restarted = local.restart_component(local_cluster.run_dir, "prometheus")
    assert restarted.pid != old.pid
    assert restarted.command == old.command
    assert local.status(local_cluster.run_dir).healthy
    assert local.connect(local_cluster.run_dir) is not None


def _down_if_left(run_dir: Path) -> None:
    """A failed assertion must not leave its cluster's processes running."""
    if run_dir.exists():
        local.down(run_dir)
