"""Compare policies at matched cost and at matched overload (design.md section 5).

A policy swept over its headroom traces a cost/overload curve. Only its
Pareto frontier counts (a setting that costs more and overloads more is never
chosen), and the frontier is interpolated linearly at the baseline's
replica-minutes, and at the baseline's overload minutes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from predictive_scaler.simulation.replay import Outcome


@dataclass(frozen=True)
class Matched:
    """Reductions against the baseline (0.3 = 30 % fewer); None when they do not exist.

    ``notes`` say why a figure is missing: the baseline never overloads, or
    the sweep cannot reach the baseline's cost or overload.
    """

    overload_at_baseline_cost: float | None
    cost_at_baseline_overload: float | None
    overload_reduction_at_baseline_cost: float | None
    cost_reduction_at_baseline_overload: float | None
    notes: tuple[str, ...] = ()


def frontier(outcomes: Sequence[Outcome]) -> list[tuple[float, float]]:
    """(replica-minutes, overload minutes) points no other point beats on both, by cost."""
    points = sorted({(o.replica_minutes, o.overload_minutes) for o in outcomes})
    kept: list[tuple[float, float]] = []
    for cost, overload in points:
        if not kept or overload < kept[-1][1]:
            kept.append((cost, overload))
    return kept


def overload_at_cost(outcomes: Sequence[Outcome], cost: float) -> float | None:
    """Overload minutes the swept policy reaches for ``cost``; None below its cheapest setting."""
    points = frontier(outcomes)
    if not points or cost < points[0][0]:
        return None
    costs, overloads = zip(*points, strict=True)
    # Beyond the dearest setting, keep its overload: spending more cannot be
    # assumed to help, so the reduction is understated rather than invented.
    return float(np.interp(cost, costs, overloads))


def cost_at_overload(outcomes: Sequence[Outcome], overload: float) -> float | None:
    """Replica-minutes the swept policy needs to overload no more than ``overload``."""
    points = frontier(outcomes)
    if not points or overload < points[-1][1]:
        return None
    # np.interp wants increasing x: walk the frontier from least overload up.
    overloads = [p[1] for p in reversed(points)]
    costs = [p[0] for p in reversed(points)]
    return float(np.interp(overload, overloads, costs))


def compare(swept: Sequence[Outcome], baseline: Outcome) -> Matched:
    notes: list[str] = []
    overload = overload_at_cost(swept, baseline.replica_minutes)
    cost = cost_at_overload(swept, baseline.overload_minutes)
    overload_reduction: float | None = None
    cost_reduction: float | None = None
    if overload is None:
        notes.append("the sweep's cheapest setting costs more than the baseline")
    elif baseline.overload_minutes == 0.0:
        notes.append("the baseline never overloads, so there is no overload to reduce")
    else:
        overload_reduction = 1.0 - overload / baseline.overload_minutes
    if cost is None:
        notes.append("no setting in the sweep overloads as little as the baseline")
    else:
        cost_reduction = 1.0 - cost / baseline.replica_minutes
    return Matched(overload, cost, overload_reduction, cost_reduction, tuple(notes))
