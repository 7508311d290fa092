"""The days before the replayed one, written into Prometheus's past as a pod that has since gone.

Users run the operator on workloads with days of history; the demo gives
its scaler the same by backfilling the bundled trace from its first step to
where the live replay begins, compressed like the replay (a trace step lasts
``seconds_per_step``) and ending at the instant the load driver's first
tick has put the live load on the pods. It
is the CPU counter of one pod of the demo's Deployment, under the labels
kwok's metrics give the live pods, so the scaler's ``resource: cpu`` query
sums it with them.

The pod's name matches the Deployment's pod names but no live pod's (a
pod-template hash has no vowels), and differs from run to run, so that on a
reused cluster two runs' histories are two series, never one counter with
interleaved samples.
"""

from __future__ import annotations

import math

import numpy as np

from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler_dev.demo.scenario import NAMESPACE, WORKLOAD, Scenario
from predictive_scaler_dev.localcluster.configs import KWOK_NODE_METRICS_JOB
from predictive_scaler_dev.localcluster.prometheus import BackfillSeries

CPU_COUNTER = "container_cpu_usage_seconds_total"
CONTAINER = "app"  # the container deployment_manifest names
# After the live replay starts the past pod is scraped idle a while longer,
# as a pod drains after a rollout: a rate() window across the hand-over then
# counts the past pod's share and the live pods' share once each. A series
# that just ended would be extrapolated to the window's end, counting the
# load of up to a scrape and a half twice. Longer than any rate window the
# demo's scaler reads (four scrapes, two steps).
IDLE_TAIL_SECONDS = 30.0
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"


def backfill_pod(ends_at: float) -> str:
    """``web-backfill-<5 base-36 digits of the end second>``: new every run, never a live pod's."""
    second = int(ends_at) % 36**5
    digits = "".join(_BASE36[second // 36**power % 36] for power in reversed(range(5)))
    return f"{WORKLOAD}-backfill-{digits}"


def core_seconds(load: FloatArray, seconds_per_step: float, elapsed: FloatArray) -> FloatArray:
    """CPU time used ``elapsed`` seconds into a replay of ``load`` (each step's load held
    for the whole step, as the live replay holds it); flat after the last step."""
    clipped = np.clip(elapsed, 0.0, load.size * seconds_per_step)
    step = np.minimum((clipped // seconds_per_step).astype(np.int64), load.size - 1)
    before = np.concatenate(([0.0], np.cumsum(load * seconds_per_step)))
    return np.asarray(before[step] + (clipped - step * seconds_per_step) * load[step])


def past_cpu(scenario: Scenario, *, ends_at: float, sample_seconds: float) -> BackfillSeries:
    """The trace before the live replay as the CPU counter of a past pod, sampled every
    ``sample_seconds`` (the scrape interval) up to ``ends_at``, when the live load began.

    kwok counts a pod's new usage from the pod's last scrape before it saw the
    change, so the live pods' counters take the load over half a scrape
    interval before the driver sets it, on average: the past pod stops
    counting then, or the summed rate would count that half scrape twice.
    """
    load = scenario.past_load()
    span = load.size * scenario.seconds_per_step
    starts_at = ends_at - span
    # On a grid through ends_at, so that the hand-over instant is a sample.
    busy = math.floor(span / sample_seconds + 1e-9)
    idle = math.ceil(IDLE_TAIL_SECONDS / sample_seconds)
    times = ends_at + sample_seconds * np.arange(-busy, idle + 1, dtype=np.float64)
    counted_until = np.minimum(times, ends_at - sample_seconds / 2)
    counter = core_seconds(load, scenario.seconds_per_step, counted_until - starts_at)
    labels = {
        "namespace": NAMESPACE,
        "pod": backfill_pod(ends_at),
        "container": CONTAINER,
        "job": KWOK_NODE_METRICS_JOB,
    }
    samples = list(zip(times.tolist(), counter.tolist(), strict=True))
    return BackfillSeries(CPU_COUNTER, labels, samples, kind="counter")


def samples_until(series: BackfillSeries, at: float) -> int:
    return sum(1 for time, _ in series.samples if time <= at)


def loaded_query(series: BackfillSeries, at: float) -> str:
    """PromQL counting the series' samples up to ``at``: all of them once Prometheus has
    loaded the blocks (the idle tail after ``at`` may lie in the future when asked)."""
    first = series.samples[0][0]
    window = math.ceil(at - first) + 1
    matchers = ",".join(f'{key}="{value}"' for key, value in sorted(series.labels.items()))
    return f"count_over_time({series.name}{{{matchers}}}[{window}s] @ {at:.3f})"
