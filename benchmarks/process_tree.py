"""CPU and memory of a process with all its descendants, from /proc.

The operator selects models in worker processes: its cost is the whole tree's.
CPU counts utime + stime of every live process in the tree plus cutime +
cstime (what the children a process has waited for used), so a worker that
exits, once reaped, stays counted in its parent. RSS sums the live processes;
pages a forked child still shares with its parent count once per process.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")


@dataclass(frozen=True)
class TreeSample:
    rss_kib: int  # the live processes' VmRSS, summed
    peak_rss_kib: int  # the root's VmHWM: its own high-water mark since it started
    cpu_seconds: float  # the tree's user + system time (reaped children included)
    processes: int
    at: float  # time.monotonic()


def stat_cpu_ticks(stat: str) -> int:
    """utime + stime + cutime + cstime from a /proc/<pid>/stat line.

    The fields are counted after the command name's closing parenthesis, since
    the name may hold spaces and parentheses; utime is the 14th field of the line.
    """
    fields = stat.rsplit(")", 1)[1].split()
    return sum(int(value) for value in fields[11:15])


def status_kib(status: str, key: str) -> int:
    """A ``VmRSS:   1234 kB`` line's number from /proc/<pid>/status; 0 when absent
    (a zombie has no memory left)."""
    for line in status.splitlines():
        name, _, value = line.partition(":")
        if name == key:
            return int(value.split()[0])
    return 0


def stat_parent(stat: str) -> int:
    """The parent pid from a /proc/<pid>/stat line (the 4th field)."""
    return int(stat.rsplit(")", 1)[1].split()[1])


def children_by_parent(proc: Path = PROC) -> dict[int, list[int]]:
    """Every process's children, from each process's parent pid.

    (Not /proc/<pid>/task/*/children: kernels built without CONFIG_PROC_CHILDREN,
    this machine's among them, have no such file.)
    """
    found: dict[int, list[int]] = {}
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = stat_parent((entry / "stat").read_text())
        except (OSError, IndexError, ValueError):  # it ended meanwhile
            continue
        found.setdefault(parent, []).append(int(entry.name))
    return found


def descendants(pid: int, proc: Path = PROC) -> list[int]:
    """The pid and every process below it, parents before their children."""
    below = children_by_parent(proc)
    tree, index = [pid], 0
    while index < len(tree):
        tree += below.get(tree[index], [])
        index += 1
    return tree


def sample_tree(pid: int, proc: Path = PROC) -> TreeSample:
    """The tree's memory and CPU now; a process that ends while being read is left out."""
    rss = cpu_ticks = processes = 0
    peak = 0
    for member in descendants(pid, proc):
        try:
            status = (proc / str(member) / "status").read_text()
            ticks = stat_cpu_ticks((proc / str(member) / "stat").read_text())
        except OSError:
            if member == pid:
                raise
            continue
        rss += status_kib(status, "VmRSS")
        cpu_ticks += ticks
        processes += 1
        if member == pid:
            peak = status_kib(status, "VmHWM")
    return TreeSample(
        rss_kib=rss,
        peak_rss_kib=peak,
        cpu_seconds=cpu_ticks / os.sysconf("SC_CLK_TCK"),
        processes=processes,
        at=time.monotonic(),
    )


def cores_used(samples: Iterable[TreeSample]) -> float:
    """CPU seconds per second from the first sample to the last."""
    ordered = list(samples)
    elapsed = ordered[-1].at - ordered[0].at
    return (ordered[-1].cpu_seconds - ordered[0].cpu_seconds) / elapsed if elapsed > 0 else 0.0


def peak_rss_kib(samples: Iterable[TreeSample]) -> int:
    """The highest sampled total, or the root's own high-water mark if that is higher
    (a spike between two samples): a lower bound of the tree's true peak."""
    ordered = list(samples)
    return max(*(s.rss_kib for s in ordered), ordered[-1].peak_rss_kib)
