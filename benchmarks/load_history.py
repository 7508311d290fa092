"""The past CPU of the operator-load benchmark's Deployments, backfilled into Prometheus.

A PredictiveScaler holds with MissingMetrics, and fits no model, until half
of its recent history has samples; `auto` finds the daily season only in two
days of long history. Users' workloads have that history when they install
the operator, so each Deployment gets it here: the CPU counter of one past pod
per Deployment, under the labels kwok's scrape gives live pods, so that the
operator's `resource: cpu` query (its pods matched by name) sums it with the
live pods'. The load is a daily sine with noise, each Deployment at its own
phase, so that a selection has a real series to backtest.

The past pod is named `<deployment>-backfill-<5 base-36 digits>`: it matches
the Deployment's pod-name pattern (`<name>-<1 to 10>-<5>`) but never a live
pod (a pod-template hash has no vowels), and it differs from run to run, so
two runs on one cluster write two series, never one counter twice.

Everything but :func:`backfill_in_blocks` is pure, for the unit tests.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler_dev.demo.history import CONTAINER, CPU_COUNTER
from predictive_scaler_dev.localcluster import LocalCluster
from predictive_scaler_dev.localcluster.configs import KWOK_NODE_METRICS_JOB
from predictive_scaler_dev.localcluster.prometheus import BackfillSeries, backfill

DAY = 86_400.0
# promtool cuts blocks at multiples of two hours and, in the Prometheus this
# cluster runs (2.42), parses its whole input once per block: handed a 2-hour
# slice at a time it makes one block per call, ten times faster for 15 days.
BLOCK_SECONDS = 7_200.0
# Beyond the recent window, one sample per 150 s: every 5-minute rate window
# of the long history (longStep 5m) holds two at least.
COARSE_EVERY = 150.0
# The recent window's samples come this much further back than the history, so
# the operator's oldest point already has a rate window full of samples.
FINE_MARGIN = 600.0
# After it stops counting, the past pod is scraped idle a little longer, as a
# pod drains after a rollout: a series that just ended would be extrapolated
# to the end of every rate window that holds its last sample.
IDLE_TAIL = 60.0
BASE_CORES = 0.2  # the live pods use this much (kwok's usage annotation)
DAILY_SWING = 0.4  # of BASE_CORES: 120m to 280m over a day, under targetPerReplica 500m
NOISE_CORES = 0.02
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"


@dataclass(frozen=True)
class PastWindow:
    """Which samples one class of Deployments gets: ``span`` seconds up to ``ends_at``,
    every ``fine_every`` over the last ``fine_span``, every COARSE_EVERY before."""

    ends_at: float
    span: float
    fine_span: float
    fine_every: float

    def times(self) -> FloatArray:
        """Sample times, on grids through ``ends_at``, then the idle tail after it."""
        fine_span = min(self.span, self.fine_span)
        fine = self.ends_at - self.fine_every * np.arange(
            math.floor(fine_span / self.fine_every + 1e-9), -1, -1, dtype=np.float64
        )
        coarse_count = math.floor((self.span - fine_span) / COARSE_EVERY + 1e-9)
        coarse = fine[0] - COARSE_EVERY * np.arange(coarse_count, 0, -1, dtype=np.float64)
        tail = self.ends_at + self.fine_every * np.arange(
            1, math.ceil(IDLE_TAIL / self.fine_every) + 1, dtype=np.float64
        )
        return np.concatenate([coarse, fine, tail])


def fine_every(step_seconds: float, scrape_seconds: float) -> float:
    """The recent window's sample spacing: half a step (so every rate window over two
    steps holds four samples or more), never finer than Prometheus scrapes."""
    return max(step_seconds / 2, scrape_seconds)


def daily_cores(times: FloatArray, phase: float, rng: np.random.Generator) -> FloatArray:
    """Cores used from each time to the next: a daily sine at ``phase`` plus noise, >= 0."""
    daily = BASE_CORES * (1 + DAILY_SWING * np.sin(2 * np.pi * times / DAY + phase))
    return np.asarray(np.clip(daily + rng.normal(0.0, NOISE_CORES, times.size), 0.0, None))


def cpu_counter(times: FloatArray, cores: FloatArray, ends_at: float) -> FloatArray:
    """The CPU-seconds counter at each time: ``cores[i]`` from ``times[i]`` to the next
    time, counting nothing after ``ends_at`` (the idle tail)."""
    spans = np.diff(np.minimum(times, ends_at), prepend=times[0])
    used = np.concatenate([[0.0], cores[:-1]]) * np.clip(spans, 0.0, None)
    return np.asarray(np.cumsum(used))


def past_pod(workload: str, ends_at: float) -> str:
    """``<workload>-backfill-<5 base-36 digits of the end second>``."""
    second = int(ends_at) % 36**5
    digits = "".join(_BASE36[second // 36**power % 36] for power in reversed(range(5)))
    return f"{workload}-backfill-{digits}"


@dataclass(frozen=True)
class PastLoad:
    """The past CPU counters of one namespace's Deployments, on one time grid."""

    namespace: str
    workloads: tuple[str, ...]
    window: PastWindow
    times: FloatArray
    counters: FloatArray  # one row per workload

    def labels(self, workload: str) -> dict[str, str]:
        return {
            "namespace": self.namespace,
            "pod": past_pod(workload, self.window.ends_at),
            "container": CONTAINER,
            "job": KWOK_NODE_METRICS_JOB,
        }

    def samples_until_end(self) -> int:
        """Samples per series up to ``ends_at`` (the idle tail left out)."""
        return int(np.count_nonzero(self.times <= self.window.ends_at))

    def blocks(self) -> set[int]:
        """The promtool blocks (BLOCK_SECONDS from the epoch on) its samples fall in."""
        return {int(block) for block in np.unique(np.floor(self.times / BLOCK_SECONDS))}

    def in_block(self, block: int) -> list[BackfillSeries]:
        """Every series' samples in one block (none when it has no sample there)."""
        inside = np.floor(self.times / BLOCK_SECONDS) == block
        if not inside.any():
            return []
        times = self.times[inside].tolist()
        return [
            BackfillSeries(
                CPU_COUNTER,
                self.labels(workload),
                list(zip(times, row[inside].tolist(), strict=True)),
                kind="counter",
            )
            for workload, row in zip(self.workloads, self.counters, strict=True)
        ]


def past_load(
    namespace: str, workloads: Sequence[str], window: PastWindow, *, seed: int
) -> PastLoad:
    """Each workload's counter, its daily sine at a phase of its own (reproducible by seed)."""
    rng = np.random.default_rng(seed)
    times = window.times()
    counters = np.empty((len(workloads), times.size))
    for row, phase in enumerate(rng.uniform(0.0, 2 * np.pi, len(workloads))):
        counters[row] = cpu_counter(times, daily_cores(times, phase, rng), window.ends_at)
    return PastLoad(namespace, tuple(workloads), window, times, counters)


def backfill_in_blocks(cluster: LocalCluster, loads: Sequence[PastLoad], *, workers: int) -> int:
    """Write every past load into Prometheus, a block per promtool call, ``workers`` calls
    at a time (a block's samples are made only when a call is free); returns the blocks."""
    made = 0
    with ThreadPoolExecutor(workers) as pool:
        running: set[Future[list[Path]]] = set()
        for block in backfill_blocks(loads):
            if len(running) >= workers:
                done, running = wait(running, return_when=FIRST_COMPLETED)
                made += sum(len(future.result()) for future in done)
            running.add(pool.submit(backfill, cluster, block))
        made += sum(len(future.result()) for future in running)
    return made


def backfill_blocks(loads: Sequence[PastLoad]) -> Iterator[list[BackfillSeries]]:
    """Every load's series, a block at a time: one call per block, so that no two blocks
    overlap and Prometheus need not merge them (a vertical compaction)."""
    for block in sorted(set().union(*(load.blocks() for load in loads))):
        yield [series for load in loads for series in load.in_block(block)]


def pod_matcher(namespace: str, workload_prefix: str) -> str:
    """Label matchers for every pod of the benchmark's Deployments in ``namespace``."""
    return f'namespace="{namespace}",pod=~"{workload_prefix}.+",container!=""'


def loaded_query(load: PastLoad) -> str:
    """PromQL counting the past pods whose every sample up to ``ends_at`` is loaded."""
    ends_at = load.window.ends_at
    window = math.ceil(ends_at - float(load.times[0])) + 1
    # Every past pod of one load ends with the same digits, and only they.
    pods = past_pod(".+", ends_at)
    selector = f'{CPU_COUNTER}{{namespace="{load.namespace}",pod=~"{pods}"}}'
    return (
        f"count(count_over_time({selector}[{window}s] @ {ends_at:.3f})"
        f" >= {load.samples_until_end()})"
    )


def operator_view_query(
    matchers: str, *, step: float, history: float, rate_window: float, share: float
) -> str:
    """PromQL counting the Deployments whose load, as the operator's range query reads it
    (the rate over ``rate_window`` of their pods' counters, summed, at every step of
    ``history``), has samples at ``share`` of the steps or more."""
    rate = f"rate({CPU_COUNTER}{{{matchers}}}[{_seconds(rate_window)}])"
    # The Deployment's name from its pods' (`<name>-<hash>-<suffix>`), to sum by.
    name = "(.+)-[a-z0-9]{1,10}-[a-z0-9]{5}"
    workload = f'label_replace({rate}, "workload", "$1", "pod", "{name}")'
    points = math.floor(history / step) + 1
    subquery = f"(sum by (workload) ({workload}))[{_seconds(history)}:{_seconds(step)}]"
    return f"count(count_over_time({subquery}) >= {math.ceil(share * points)})"


def _seconds(value: float) -> str:
    return f"{max(1, round(value))}s"
