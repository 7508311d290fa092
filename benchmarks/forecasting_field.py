"""The first forecasting target asked of every contender, not of ``auto`` alone.

The target ("at or below the best anchor's MASE on every trace and horizon") compares
one model with the lowest of four others in each of twelve cells (four traces, three
horizons), the lowest picked after the fact on the same origins. Asked of each anchor
(against the best of the other three) and of the anchors' mean, it says whether any
model of the field meets it; resampling the origins says how often a model would meet
it on other origins of the same traces, which is what a target that holds "on load it
has never seen" has to survive.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from benchmarks.forecast_jobs import ANCHORS
from benchmarks.forecasting_accuracy import (
    ANCHORS_MEAN,
    GAP_RESAMPLES,
    GAP_SEED,
    SCORED_HORIZONS,
    TraceResult,
    paired_gap,
)
from predictive_scaler.forecasting import Auto
from predictive_scaler.forecasting.forecast import FloatArray

CONTENDERS = (Auto.name, *ANCHORS, ANCHORS_MEAN)


@dataclass(frozen=True)
class FieldRow:
    """How one contender fares against the best of its rivals in every cell."""

    contender: str
    rivals: tuple[str, ...]
    cells: int
    at_or_below: int  # cells where its mean MASE is at or below its best rival's
    behind_beyond_noise: int  # cells where the paired interval to that rival is above 0
    resampled_share: float  # share of resamples of the origins in which it meets the target

    @property
    def meets_target(self) -> bool:
        return self.at_or_below == self.cells


def rivals_of(contender: str) -> tuple[str, ...]:
    """An anchor is compared with the other anchors; auto and the anchors' mean with all four."""
    return tuple(name for name in ANCHORS if name != contender)


def _scored_origins(result: TraceResult) -> FloatArray:
    """Which origins every contender scored at: the others' figures would mix origins."""
    tables = [result.per_origin[name] for name in CONTENDERS]
    return np.asarray(np.all([np.isfinite(t).all(axis=1) for t in tables], axis=0))


def _resampled_means(result: TraceResult, rng: np.random.Generator) -> dict[str, FloatArray]:
    """Each contender's mean MASE per horizon in every resample (GAP_RESAMPLES x horizons).

    Origins are drawn a cluster at a time, as :func:`paired_gap` draws them, and every
    contender is scored on the same draw, so the comparisons within a resample stay paired.
    """
    scored = _scored_origins(result)
    _, cluster_of = np.unique(np.asarray(result.clusters)[scored], return_inverse=True)
    clusters = int(cluster_of.max()) + 1
    drawn = rng.integers(0, clusters, size=(GAP_RESAMPLES, clusters))
    counts = np.bincount(cluster_of, minlength=clusters).astype(np.float64)
    drawn_counts = counts[drawn].sum(axis=1)
    means = {}
    for name in CONTENDERS:
        values = result.per_origin[name][scored]
        horizons = range(len(SCORED_HORIZONS))
        sums = np.stack(
            [np.bincount(cluster_of, weights=values[:, h], minlength=clusters) for h in horizons],
            axis=1,
        )
        means[name] = sums[drawn].sum(axis=1) / drawn_counts[:, None]
    return means


def field_rows(results: Sequence[TraceResult]) -> list[FieldRow]:
    """Every contender against the best of its rivals, cell by cell and over resamples."""
    rng = np.random.default_rng(GAP_SEED)
    resampled = [_resampled_means(result, rng) for result in results]
    rows = []
    for contender in CONTENDERS:
        rivals = rivals_of(contender)
        at_or_below = behind = 0
        met_everywhere = np.ones(GAP_RESAMPLES, dtype=bool)
        for result, means in zip(results, resampled, strict=True):
            scored = _scored_origins(result)
            for h in range(len(SCORED_HORIZONS)):
                mine = result.per_origin[contender][scored, h]
                theirs = {name: result.per_origin[name][scored, h] for name in rivals}
                best = min(rivals, key=lambda name: float(theirs[name].mean()))
                at_or_below += bool(mine.mean() <= theirs[best].mean())
                gap = paired_gap(mine, theirs[best], np.asarray(result.clusters)[scored].tolist())
                behind += gap.beyond_noise
                lowest_rival = np.min([means[name][:, h] for name in rivals], axis=0)
                met_everywhere &= means[contender][:, h] <= lowest_rival
        rows.append(
            FieldRow(
                contender,
                rivals,
                len(results) * len(SCORED_HORIZONS),
                at_or_below,
                behind,
                float(met_everywhere.mean()),
            )
        )
    return rows
