"""Watching an operator under load: every evaluation stamp of every object, and its
process tree, sampled at a cadence; what the measurement in :mod:`benchmarks.operator_load`
reads."""

from __future__ import annotations

import contextlib
import json
import threading
import time
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import urllib3
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from benchmarks.operator_load_classes import POLL_SECONDS, LoadClass
from benchmarks.operator_load_cluster import say, scaler_statuses
from benchmarks.operator_load_figures import MetricSamples, evaluated_at, parse_metrics
from benchmarks.process_tree import TreeSample, sample_tree
from predictive_scaler_dev.demo.process import OperatorExitedError, OperatorProcess


@dataclass
class Observation:
    """What watching and polling the objects and sampling the operator's process tree found."""

    classes: tuple[LoadClass, ...]
    counts: Mapping[str, int]
    started: float  # epoch: the operator's launch
    seen: dict[str, dict[str, set[float]]] = field(default_factory=dict)
    first_forecast: dict[str, dict[str, float]] = field(default_factory=dict)
    statuses: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    samples: list[TreeSample] = field(default_factory=list)

    def __post_init__(self) -> None:
        for c in self.classes:
            self.seen[c.kind], self.first_forecast[c.kind], self.statuses[c.kind] = {}, {}, {}

    # The polls and the status watches (threads of their own) record here.
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def record(self, load_class: LoadClass, statuses: Mapping[str, dict[str, Any]]) -> None:
        for name, status in statuses.items():
            self.record_one(load_class.kind, name, status)

    def record_one(self, kind: str, name: str, status: dict[str, Any]) -> None:
        with self.lock:
            self.statuses[kind][name] = status
            if (at := evaluated_at(status)) is not None:
                self.seen[kind].setdefault(name, set()).add(at)
            if "forecast" in status:
                self.first_forecast[kind].setdefault(name, time.time())

    def all_evaluated(self) -> bool:
        return all(
            sum(1 for times in self.seen[c.kind].values() if times) >= self.counts[c.kind]
            for c in self.classes
        )

    def evaluated(self) -> int:
        return sum(len(self.seen[c.kind]) for c in self.classes)


def operator_metrics(operator: OperatorProcess, *, tries: int = 3) -> MetricSamples:
    """The operator's metrics; a busy operator gets longer than OperatorProcess's 2 s."""
    url = f"http://127.0.0.1:{operator.metrics_port}/metrics"
    for attempt in range(tries):
        try:
            with urllib.request.urlopen(url, timeout=15) as response:
                return parse_metrics(response.read().decode())
        except OSError:
            if attempt == tries - 1:
                raise
            time.sleep(2.0)
    raise AssertionError("unreachable")


def poll_every(load_class: LoadClass) -> float:
    """Four times a period: what a status watch missed (while it listed again) is caught up.

    Every lastEvaluationTime comes from the watch (:mod:`benchmarks.status_watch`);
    a poll alone misses the turns a new model wakes shortly before a due one.
    No more often: listing 1,000 objects every 2 s loads the API server on the
    operator's two cores with work no production cluster would carry.
    """
    return load_class.sync_seconds / 4


def observe(
    custom: client.CustomObjectsApi,
    operator: OperatorProcess,
    observation: Observation,
    deadline: float,
    done: Callable[[], bool] = lambda: False,
) -> None:
    """Poll each class at its own pace and the process tree every POLL_SECONDS, until
    ``deadline`` (monotonic) or ``done()``. A sampling cadence, not a synchronisation."""
    classes = [c for c in observation.classes if observation.counts[c.kind]]
    due = {c.kind: 0.0 for c in classes}
    tree_due = 0.0
    while True:
        if not operator.running():
            raise OperatorExitedError(operator.log_tail())
        now = time.monotonic()
        for c in classes:
            if now >= due[c.kind]:
                due[c.kind] = now + poll_every(c)
                # A busy API server may fail a list: the next turn lists again.
                with contextlib.suppress(ApiException, urllib3.exceptions.HTTPError):
                    observation.record(c, scaler_statuses(custom, c.namespace))
        if now >= tree_due:
            tree_due = now + POLL_SECONDS
            observation.samples.append(sample_tree(operator.pid))
        if done() or now >= deadline:
            return
        next_turn = min([*due.values(), tree_due, deadline])
        time.sleep(max(0.0, next_turn - time.monotonic()))


def keep_stamps(observation: Observation, path: Path) -> None:
    """Every evaluation stamp seen, per class and object, beside the operator's log.

    The table says how many objects had a late gap; these say when, so a late
    gap shared by many objects at one moment (a stall) can be told from one
    object's own (its turn queued behind others).
    """
    stamps = {
        kind: {name: sorted(times) for name, times in sorted(seen.items())}
        for kind, seen in observation.seen.items()
    }
    path.write_text(json.dumps({"started": observation.started, "stamps": stamps}) + "\n")
    say(f"evaluation stamps in {path}")
