"""A cold build says what it is doing: on a terminal, in a log, and when it fails."""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

import pytest

from predictive_scaler_dev.localcluster.build import BuildError, BuildLog
from predictive_scaler_dev.localcluster.components import KUBERNETES
from predictive_scaler_dev.localcluster.progress import (
    BuildProgress,
    BuildTimes,
    Expected,
    duration,
)
from predictive_scaler_dev.localcluster.waiting import wait_until


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def plain(clock: Clock) -> tuple[BuildProgress, io.StringIO]:
    out = io.StringIO()
    # The ticker would draw on its own every hour: the test draws by hand.
    return BuildProgress(out, interactive=False, refresh=3600, clock=clock), out


def test_durations_read_at_a_glance() -> None:
    assert [duration(s) for s in (0.4, 45, 190, 3720)] == ["0s", "45s", "3m10s", "1h02m"]


def test_the_first_line_comes_at_once_and_names_the_component_and_the_time_left() -> None:
    clock = Clock()
    progress, out = plain(clock)
    with progress.component("[2/4] kubernetes v1.36.3", Expected(300, "last build here")):
        first = out.getvalue()
    assert first.startswith("[2/4] kubernetes v1.36.3: starting, 0s so far, about 5m00s left")
    assert "(last build here: 5m00s)" in first
    assert out.getvalue().splitlines()[-1] == "[2/4] kubernetes v1.36.3: built in 0s"


def test_without_a_terminal_a_plain_line_comes_at_each_phase_and_every_half_minute() -> None:
    clock = Clock()
    progress, out = plain(clock)
    with progress.component("etcd", Expected(100, "typical on 2 cores")) as shown:
        shown.phase("compiling packages", total=580)
        progress.show()
        for _ in range(290):
            shown.advance()
        clock.now += 10
        progress.show()  # not due yet: no new line
        clock.now += 25
        progress.show()
        clock.now += 100
        progress.show()
    lines = out.getvalue().splitlines()
    assert lines[1] == (
        "etcd: compiling packages 0/580, 0s so far, about 1m40s left (typical on 2 cores: 1m40s)"
    )
    assert lines[2] == "etcd: compiling packages 290/580, 35s so far, about 1m05s left " + (
        "(typical on 2 cores: 1m40s)"
    )
    assert lines[3].endswith("2m15s so far, longer than typical on 2 cores (1m40s)")
    assert lines[4] == "etcd: built in 2m15s"
    assert len(lines) == 5


def test_on_a_terminal_one_line_is_redrawn() -> None:
    out = io.StringIO()
    progress = BuildProgress(out, interactive=True, refresh=3600, clock=Clock())
    with progress.component("helm", None) as shown:
        shown.phase("downloading the modules it needs")
        progress.show()
    text = out.getvalue()
    assert text.count("\r\033[K") >= 3
    assert "helm: downloading the modules it needs, 0s so far, no earlier build" in text
    assert text.endswith("\r\033[Khelm: built in 0s\n")


def test_the_ticker_draws_by_itself_while_the_build_is_silent() -> None:
    out = io.StringIO()
    progress = BuildProgress(out, interactive=True, refresh=0.01)
    with progress.component("kwok", None):
        # One draw on entry, then the ticker's: three means it ticked twice unprompted.
        wait_until(lambda: out.getvalue().count("kwok: starting") >= 3, timeout=30, what="ticks")


def test_a_failure_is_said_and_raised() -> None:
    clock = Clock()
    progress, out = plain(clock)

    def fail_after_a_minute() -> None:
        with progress.component("helm", None):
            clock.now += 61
            raise BuildError("boom")

    with pytest.raises(BuildError):
        fail_after_a_minute()
    assert out.getvalue().splitlines()[-1] == "helm: failed after 1m01s"


def test_a_failed_command_shows_its_last_lines_and_where_the_whole_log_is(tmp_path: Path) -> None:
    log = BuildLog(tmp_path / "build-x.log")
    script = "for i in $(seq 1 50); do echo line $i; done; echo broken >&2; exit 3"
    seen: list[str] = []
    with pytest.raises(BuildError) as raised:
        log.stream(["sh", "-c", script], cwd=tmp_path, env=dict(os.environ), on_line=seen.append)
    message = str(raised.value)
    assert "failed with exit 3" in message
    assert "line 50\nbroken" in message
    assert "line 10\n" not in message  # only the tail
    assert message.endswith(f"full log: {log.path}")
    assert seen[0] == "line 1"
    assert seen[-1] == "broken"
    assert "line 1\n" in log.path.read_text()


def test_captured_output_is_returned_and_logged(tmp_path: Path) -> None:
    log = BuildLog(tmp_path / "build-y.log")
    command = [sys.executable, "-c", "import sys; print('out'); print('err', file=sys.stderr)"]
    assert log.capture(command, cwd=tmp_path, env=dict(os.environ)) == "out\n"
    text = log.path.read_text()
    assert "out\n" in text
    assert "err\n" in text
    assert text.startswith("$ ")


def test_the_estimate_is_the_last_build_here_else_the_typical_one(tmp_path: Path) -> None:
    times = BuildTimes(tmp_path / "build-times.json")
    typical = KUBERNETES.typical_seconds
    assert times.expected("kubernetes", typical) == Expected(typical, "typical on 2 cores")
    times.record("kubernetes", 412.34)
    assert times.expected("kubernetes", typical) == Expected(412.3, "last build here")
    (tmp_path / "build-times.json").write_text("not json")
    assert times.last("kubernetes") is None
