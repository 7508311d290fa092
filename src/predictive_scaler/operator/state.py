"""What the handlers of one operator process share: settings, workers, queues, runtimes."""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from predictive_scaler.operator import metrics
from predictive_scaler.operator.fairness import FairQueue
from predictive_scaler.operator.kube import Kubernetes
from predictive_scaler.operator.leadership import Leadership
from predictive_scaler.operator.ranking import ScaleInRanker
from predictive_scaler.operator.rebalancer import Rebalancer
from predictive_scaler.operator.reconcile import Evaluator
from predictive_scaler.operator.runtime import ObjectRuntime
from predictive_scaler.operator.selection_workers import SelectionWorkers
from predictive_scaler.operator.settings import OperatorSettings
from predictive_scaler.operator.shard import selector_matcher


@dataclass
class OperatorState:
    """Shared by every handler through kopf's `memo`."""

    settings: OperatorSettings
    evaluator: Evaluator
    # The operator's own requests beyond an evaluation's (the CRD-deletion check).
    kube: Kubernetes
    # Evaluation threads; their seats are handed out by `evaluations`.
    executor: concurrent.futures.ThreadPoolExecutor
    selection_workers: SelectionWorkers
    # The rebalancer and the CRD check: never holding a seat an evaluation waits for.
    background: concurrent.futures.ThreadPoolExecutor = field(
        default_factory=lambda: concurrent.futures.ThreadPoolExecutor(
            2, thread_name_prefix="background"
        )
    )
    rebalancer: Rebalancer | None = None
    # Writes the pods' deletion costs before a scale-in, and takes them off with their scaler.
    ranker: ScaleInRanker | None = None
    # None: this process always acts. Else it acts only while it holds the Lease.
    leadership: Leadership | None = None
    runtimes: dict[str, ObjectRuntime] = field(default_factory=dict)
    # The status this process wrote last, per object: the watch may not have
    # delivered it yet when the next turn starts, and the decision state must
    # never go back in time.
    written: dict[str, dict[str, Any]] = field(default_factory=dict)
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    # Selections under way: cancelled at shutdown.
    selecting: set[asyncio.Task[Any]] = field(default_factory=set)

    @functools.cached_property
    def evaluations(self) -> FairQueue:
        return FairQueue(
            self.settings.evaluation_workers,
            on_depth=metrics.QUEUED.labels("evaluation").set,
        )

    @functools.cached_property
    def selections(self) -> FairQueue:
        return FairQueue(
            self.selection_workers.processes,
            on_depth=metrics.QUEUED.labels("selection").set,
        )

    @functools.cached_property
    def in_shard(self) -> Callable[[Mapping[str, str] | None], bool]:
        return selector_matcher(self.settings.shard_selector)

    def acting(self) -> bool:
        """False once the Lease is lost: no evaluation or eviction may start after that."""
        return self.leadership is None or self.leadership.leading.is_set()
