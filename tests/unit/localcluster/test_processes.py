from __future__ import annotations

import sys
from pathlib import Path

import pytest

from predictive_scaler_dev.localcluster import processes

SLEEPER = [sys.executable, "-c", "import time; print('started', flush=True); time.sleep(60)"]


def test_started_process_is_alive_until_stopped(tmp_path: Path) -> None:
    started = processes.start("sleeper", SLEEPER, tmp_path / "sleeper.log")
    try:
        assert processes.is_alive(started)
        processes.wait_healthy(
            started, lambda: "started" in (tmp_path / "sleeper.log").read_text(), timeout=10
        )
        stopped = processes.stop(started)
        assert stopped.how == "terminated"
        assert not processes.is_alive(started)
        assert processes.stop(started).how == "was not running"
    finally:
        processes.stop(started)


def test_a_recorded_pid_with_another_start_time_is_never_signalled(tmp_path: Path) -> None:
    started = processes.start("sleeper", SLEEPER, tmp_path / "sleeper.log")
    try:
        impostor = started.model_copy(update={"start_ticks": started.start_ticks + 1})
        assert not processes.is_alive(impostor)
        assert processes.stop(impostor).how == "was not running"
        assert processes.is_alive(started)
    finally:
        processes.stop(started)


def test_waiting_on_a_process_that_dies_fails_with_its_log(tmp_path: Path) -> None:
    dying = [sys.executable, "-c", "import sys; print('bad flag'); sys.exit(3)"]
    started = processes.start("dying", dying, tmp_path / "dying.log")
    with pytest.raises(processes.ComponentFailedError, match="bad flag"):
        processes.wait_healthy(started, lambda: False, timeout=10)
