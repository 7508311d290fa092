"""How many cores this process may use: its cgroup's CPU limit, else the CPUs it may run on.

A container's CPU limit is a CFS quota, invisible to ``os.cpu_count()``: a
pod limited to 2 cores on a 64-core node would otherwise start 64 selection
workers that the kernel throttles to 2.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

CGROUP = Path("/sys/fs/cgroup")


def _quota(cgroup: Path) -> float | None:
    """Cores the cgroup's quota allows (v2 cpu.max, else v1 cfs files); None when unlimited."""
    try:
        quota, period = (cgroup / "cpu.max").read_text().split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        pass
    try:
        quota_us = int((cgroup / "cpu" / "cpu.cfs_quota_us").read_text())
        period_us = int((cgroup / "cpu" / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return None if quota_us <= 0 or period_us <= 0 else quota_us / period_us


def usable_cores(cgroup: Path = CGROUP) -> int:
    """Whole cores (rounded up, at least 1) the quota and the affinity mask both allow."""
    available = len(os.sched_getaffinity(0))
    quota = _quota(cgroup)
    if quota is not None:
        available = min(available, math.ceil(quota))
    return max(1, available)
