"""Rolling tallies behind ``status.comparison``: what ran, what the HPA would have run.

Three sides are counted step by step: ``predictive`` (the workload as it
really ran), ``replayed`` (the forecast's own decisions through the replay
model: what a DryRun object would have run, and like for like with the
shadow) and ``hpa`` (the shadow HPA). Forecasts that came due are scored
beside them.

Steps are summed into buckets, not kept: five-minute buckets for the hour
window and hourly ones for the day and the week, so a week costs 180 small
rows in an object's status and the windows roll at that resolution.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

import numpy as np

SIDES = ("predictive", "replayed", "hpa")


class Column(IntEnum):
    """Columns of a bucket row (after its start time)."""

    # In seconds, not minutes: whole numbers for whole-second steps, so sums stay exact.
    SECONDS = 0  # of steps counted
    PREDICTIVE_REPLICA_SECONDS = 1
    PREDICTIVE_OVERLOAD_SECONDS = 2
    REPLAYED_REPLICA_SECONDS = 3
    REPLAYED_OVERLOAD_SECONDS = 4
    HPA_REPLICA_SECONDS = 5
    HPA_OVERLOAD_SECONDS = 6
    FORECASTS = 7  # forecast steps scored
    SCALED_ERROR = 8  # sum of |actual - mean| / scale
    COVERED = 9  # of which within the interval


WIDTH = len(Column)


@dataclass(frozen=True)
class Tier:
    bucket_seconds: float
    keep: int


FINE = Tier(300.0, 12)
COARSE = Tier(3600.0, 168)


@dataclass(frozen=True)
class Window:
    name: str
    seconds: float
    tier: Tier


WINDOWS = (
    Window("1h", 3600.0, FINE),
    Window("24h", 86400.0, COARSE),
    Window("7d", 604800.0, COARSE),
)
# The window whose figures decide WorseThanReactive and the SAVED column.
JUDGED = WINDOWS[1]
# A verdict on fewer steps than this would be about noise.
JUDGED_STEPS = 60


@dataclass(frozen=True)
class Cost:
    replica_minutes: float
    overload_minutes: float


@dataclass(frozen=True)
class Sides:
    """One step's replicas and whether each side was overloaded."""

    replicas: tuple[int, int, int]
    overloaded: tuple[bool, bool, bool]


@dataclass(frozen=True)
class Scored:
    """Forecast steps that came due: how many, their summed scaled error, how many covered."""

    count: int = 0
    scaled_error: float = 0.0
    covered: int = 0


@dataclass(frozen=True)
class WindowFigures:
    window: Window
    minutes: float
    costs: dict[str, Cost]
    forecasts: int
    # Mean absolute scaled error of the forecast steps that came due (MASE).
    forecast_error: float | None
    # Share of them inside the forecast interval.
    coverage: float | None

    def saved(self, side: str = "predictive") -> float | None:
        """Relative replica-minutes against the shadow HPA (-0.18: 18 % fewer)."""
        hpa = self.costs["hpa"].replica_minutes
        return None if hpa <= 0 else self.costs[side].replica_minutes / hpa - 1.0

    def enough(self, step_seconds: float) -> bool:
        """Whether the window holds enough steps for a verdict."""
        return self.minutes >= JUDGED_STEPS * step_seconds / 60.0 - 1e-9

    def worse_than_reactive(self, step_seconds: float, side: str = "predictive") -> bool:
        """``side`` cost more replica-minutes *and* overloaded more than the shadow HPA."""
        if not self.enough(step_seconds):
            return False
        ours, hpa = self.costs[side], self.costs["hpa"]
        return (
            ours.overload_minutes > hpa.overload_minutes
            and ours.replica_minutes > hpa.replica_minutes
        )


Row = tuple[float, ...]


@dataclass(frozen=True)
class Tallies:
    """Bucket rows ``(start, *Column)`` per tier, oldest first, and one row since ``since``.

    The row since a moment is what a verdict made afresh at that moment (a
    switch to or from following the shadow) is judged on, until it is a
    judged window long.
    """

    fine: tuple[Row, ...] = ()
    coarse: tuple[Row, ...] = ()
    since: Row = ()

    def add(self, time: float, seconds: float, sides: Sides, scored: Scored) -> Tallies:
        """Count one step of ``seconds`` that ended at ``time``."""
        values = np.zeros(WIDTH)
        values[Column.SECONDS] = seconds
        for index, (replicas, over) in enumerate(
            zip(sides.replicas, sides.overloaded, strict=True)
        ):
            values[1 + 2 * index] = replicas * seconds
            values[2 + 2 * index] = seconds if over else 0.0
        values[Column.FORECASTS] = scored.count
        values[Column.SCALED_ERROR] = scored.scaled_error
        values[Column.COVERED] = scored.covered
        since = self.since
        if since:
            since = (since[0], *(round(a + b, 6) for a, b in zip(since[1:], values, strict=True)))
        return Tallies(
            _added(self.fine, FINE, time, values),
            _added(self.coarse, COARSE, time, values),
            since,
        )

    def counting_from(self, time: float) -> Tallies:
        """These tallies with the row since ``time`` started afresh."""
        return Tallies(self.fine, self.coarse, (time, *([0.0] * WIDTH)))

    def figures(self, window: Window, now: float) -> WindowFigures:
        """Sums over the window's ``seconds / bucket_seconds`` newest buckets (the current too)."""
        rows = self.fine if window.tier is FINE else self.coarse
        newest = _bucket_start(now, window.tier)
        oldest = newest - window.seconds + window.tier.bucket_seconds
        kept = [row[1:] for row in rows if row[0] >= oldest - 1e-6]
        return _figures(window, np.sum(kept, axis=0) if kept else np.zeros(WIDTH))

    def judged(self, now: float) -> WindowFigures:
        """The judged window, or the row since the last fresh start when that is shorter."""
        if self.since and now - self.since[0] < JUDGED.seconds:
            return _figures(JUDGED, np.array(self.since[1:]))
        return self.figures(JUDGED, now)


def _figures(window: Window, total: np.ndarray) -> WindowFigures:
    costs = {
        side: Cost(float(total[1 + 2 * index]) / 60.0, float(total[2 + 2 * index]) / 60.0)
        for index, side in enumerate(SIDES)
    }
    count = round(float(total[Column.FORECASTS]))
    return WindowFigures(
        window,
        float(total[Column.SECONDS]) / 60.0,
        costs,
        count,
        float(total[Column.SCALED_ERROR]) / count if count else None,
        float(total[Column.COVERED]) / count if count else None,
    )


def _bucket_start(time: float, tier: Tier) -> float:
    # A step ending exactly on a boundary belongs to the bucket it ends.
    return float(np.ceil(time / tier.bucket_seconds - 1e-9) - 1) * tier.bucket_seconds


def _added(rows: tuple[Row, ...], tier: Tier, time: float, values: np.ndarray) -> tuple[Row, ...]:
    start = _bucket_start(time, tier)
    if rows and abs(rows[-1][0] - start) < 1e-6:
        last = rows[-1]
        merged = (last[0], *(round(a + b, 6) for a, b in zip(last[1:], values, strict=True)))
        return (*rows[:-1], merged)
    fresh = (start, *(round(float(v), 6) for v in values))
    return (*rows, fresh)[-tier.keep :]
