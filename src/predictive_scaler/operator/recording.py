"""Values recorded as they are read, served back as histories on step grids.

For a metric source that answers only "now" (metrics.k8s.io): each thing it
reads (an object's load, a node's or a pod's CPU) is recorded on the grid of
every step a history of it has been asked at. A slot of step ``s`` at time
``T`` holds the mean of what arrived in ``(T - s, T]``; a grid keeps the last
slots it was asked for, so its memory is bounded by the windows in use.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field

import numpy as np

from predictive_scaler.forecasting.forecast import FloatArray


@dataclass
class Grid:
    """Recorded values of one thing on one step's grid: slot T holds what arrived in (T-step, T]."""

    step: float
    slots: int
    sums: FloatArray = field(init=False)
    counts: FloatArray = field(init=False)
    newest: float = -math.inf  # the newest slot's time

    def __post_init__(self) -> None:
        self.sums = np.zeros(self.slots)
        self.counts = np.zeros(self.slots)

    def _index(self, slot: float) -> int:
        return round(slot / self.step) % self.slots

    def add(self, at: float, value: float) -> None:
        slot = math.ceil(at / self.step - 1e-9) * self.step
        if slot <= self.newest - self.slots * self.step:
            return  # older than anything kept
        if slot > self.newest:
            # The slots between the newest and this one saw nothing: clear them.
            gap = (slot - self.newest) / self.step if math.isfinite(self.newest) else self.slots
            for back in range(min(self.slots, round(gap))):
                index = self._index(slot - back * self.step)
                self.sums[index] = self.counts[index] = 0.0
            self.newest = slot
        index = self._index(slot)
        self.sums[index] += value
        self.counts[index] += 1

    def read(self, start: float, end: float) -> FloatArray:
        """The mean recorded in each slot from ``start`` to ``end``; NaN where nothing was."""
        times = start + self.step * np.arange(round((end - start) / self.step) + 1)
        values = np.full(times.size, np.nan)
        oldest = self.newest - (self.slots - 1) * self.step
        kept = (times >= oldest - 1e-9) & (times <= self.newest + 1e-9)
        indices = np.round(times[kept] / self.step).astype(np.int64) % self.slots
        counts = self.counts[indices]
        values[kept] = np.where(
            counts > 0, self.sums[indices] / np.where(counts > 0, counts, 1.0), np.nan
        )
        return values

    def grown(self, slots: int) -> Grid:
        """The same record with room for ``slots`` slots."""
        if slots <= self.slots:
            return self
        bigger = Grid(self.step, slots)
        if math.isfinite(self.newest):
            start = self.newest - (self.slots - 1) * self.step
            for offset, value in enumerate(self.read(start, self.newest)):
                if math.isfinite(value):
                    bigger.add(start + offset * self.step, value)
        return bigger


@dataclass
class _Record:
    """What has been read of one thing: the time of the newest answer, and its grids."""

    last_sample: float = -math.inf
    last_read: float = -math.inf
    grids: dict[float, Grid] = field(default_factory=dict)


class Recorder:
    """Values recorded as they are read, served back as histories on step grids.

    Each thing (an object's load, a node, a pod) is recorded on every grid
    that has been asked of it; an answer is recorded once (its timestamp),
    however often it is read. Thread-safe: evaluations run in several threads.
    """

    def __init__(self) -> None:
        self._records: dict[Hashable, _Record] = {}
        self._lock = threading.Lock()

    def add(self, key: Hashable, at: float, value: float, now: float) -> None:
        with self._lock:
            record = self._records.setdefault(key, _Record())
            record.last_read = now
            if at <= record.last_sample:
                return
            record.last_sample = at
            for grid in record.grids.values():
                grid.add(at, value)

    def history(
        self, key: Hashable, *, step: float, start: float, end: float, now: float
    ) -> FloatArray:
        """``key``'s recorded values from ``start`` to ``end``; a new grid starts empty."""
        with self._lock:
            return self._grid(key, step, round((end - start) / step) + 1, now).read(start, end)

    def record_on(self, key: Hashable, *, step: float, slots: int, now: float) -> None:
        """Record ``key`` on a grid of ``step`` with room for ``slots`` from now on."""
        with self._lock:
            self._grid(key, step, slots, now)

    def _grid(self, key: Hashable, step: float, slots: int, now: float) -> Grid:
        record = self._records.setdefault(key, _Record())
        record.last_read = now
        grid = record.grids.get(step)
        grid = Grid(step, slots) if grid is None else grid.grown(slots)
        record.grids[step] = grid
        return grid

    def histories(
        self, kind: type, *, step: float, start: float, end: float, now: float
    ) -> dict[Hashable, FloatArray]:
        """Every recorded thing of ``kind``, each from ``start`` to ``end`` (one lock)."""
        slots = round((end - start) / step) + 1
        with self._lock:
            return {
                key: self._grid(key, step, slots, now).read(start, end)
                for key in list(self._records)
                if isinstance(key, kind)
            }

    def keys(self, kind: type) -> list[Hashable]:
        with self._lock:
            return [key for key in self._records if isinstance(key, kind)]

    def keep_only(self, kind: type, seen: Iterable[Hashable]) -> None:
        """Forget the things of ``kind`` that the last full read no longer had (gone pods)."""
        kept = set(seen)
        with self._lock:
            for key in [k for k in self._records if isinstance(k, kind) and k not in kept]:
                del self._records[key]

    def __len__(self) -> int:
        return len(self._records)
