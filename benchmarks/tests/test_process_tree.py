"""The operator's CPU and memory with its worker processes, read from /proc."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.process_tree import (
    TreeSample,
    cores_used,
    descendants,
    peak_rss_kib,
    sample_tree,
    stat_cpu_ticks,
    stat_parent,
    status_kib,
)

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")

# A child that burns CPU for a while, then waits to be told to go.
BURN = (
    "import sys, time\n"
    "end = time.process_time() + {seconds}\n"
    "while time.process_time() < end: pass\n"
    "print('done', flush=True)\n"
    "sys.stdin.read()\n"
)


def test_the_stat_line_is_read_after_the_command_name() -> None:
    # A command name may hold spaces and parentheses.
    line = "42 (a (b) c) S 7 42 42 0 -1 4194560 1 2 3 4 100 20 5 6 20 0 1 0 9 1 2"
    assert stat_parent(line) == 7
    assert stat_cpu_ticks(line) == 100 + 20 + 5 + 6


def test_status_fields_are_read_in_kib() -> None:
    status = "Name:\tpython\nVmHWM:\t  2048 kB\nVmRSS:\t  1024 kB\n"
    assert status_kib(status, "VmRSS") == 1024
    assert status_kib(status, "VmHWM") == 2048
    assert status_kib("Name:\tzombie\n", "VmRSS") == 0


def test_the_tree_counts_a_busy_child_while_it_runs_and_once_it_is_reaped() -> None:
    before = sample_tree(os.getpid())
    child = subprocess.Popen(
        [sys.executable, "-c", BURN.format(seconds=0.5)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "done"
        assert child.pid in descendants(os.getpid())
        running = sample_tree(os.getpid())
        assert running.processes >= before.processes + 1
        assert running.cpu_seconds - before.cpu_seconds >= 0.45
        assert running.rss_kib > before.rss_kib
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait()
    reaped = sample_tree(os.getpid())
    assert child.pid not in descendants(os.getpid())
    assert reaped.cpu_seconds - before.cpu_seconds >= 0.45  # now in our cutime


def test_cores_and_peak_come_from_the_samples() -> None:
    samples = [
        TreeSample(rss_kib=100, peak_rss_kib=90, cpu_seconds=1.0, processes=1, at=10.0),
        TreeSample(rss_kib=300, peak_rss_kib=120, cpu_seconds=3.0, processes=3, at=12.0),
        TreeSample(rss_kib=200, peak_rss_kib=400, cpu_seconds=4.0, processes=2, at=14.0),
    ]
    assert cores_used(samples) == pytest.approx(0.75)
    assert peak_rss_kib(samples) == 400
    assert peak_rss_kib(samples[:2]) == 300
