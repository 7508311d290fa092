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
    resampled_means,
)
from predictive_scaler.forecasting import Auto
from predictive_scaler.forecasting.forecast import FloatArray

CONTENDERS = (Auto.name, *ANCHORS, ANCHORS_MEAN)


@dataclass(frozen=True)
class FieldRow:
    """How one contender fares against the best of its rivals in every cell."""

    contender: str
    cells: int
    at_or_below: int  # cells where its mean MASE is at or below its best rival's
    behind_beyond_noise: int  # cells where the paired interval to that rival is above 0
    resampled_share: float  # share of resamples of the origins in which it meets the target

    @property
    def rivals(self) -> tuple[str, ...]:
        return rivals_of(self.contender)

    @property
    def meets_target(self) -> bool:
        return self.at_or_below == self.cells


def rivals_of(contender: str) -> tuple[str, ...]:
    """An anchor is compared with the other anchors; auto and the anchors' mean with all four."""
    return tuple(name for name in ANCHORS if name != contender)


@dataclass(frozen=True)
class _TraceScores:
    """One trace's per-origin MASE of every contender, at the origins all of them scored
    (the others' figures would mix origins), and their means over the same resamples."""

    per_origin: dict[str, FloatArray]  # contender: (origins, horizons)
    clusters: list[int]
    resampled: dict[str, FloatArray]  # contender: (GAP_RESAMPLES, horizons)


def _trace_scores(result: TraceResult, rng: np.random.Generator) -> _TraceScores:
    tables = [result.per_origin[name] for name in CONTENDERS]
    scored = np.all([np.isfinite(table).all(axis=1) for table in tables], axis=0)
    per_origin = {name: table[scored] for name, table in zip(CONTENDERS, tables, strict=True)}
    clusters = np.asarray(result.clusters)[scored].tolist()
    # One draw for all contenders (the last axis), so each resample compares them paired.
    means = resampled_means(np.stack(list(per_origin.values()), axis=-1), clusters, rng)
    resampled = {name: means[..., index] for index, name in enumerate(CONTENDERS)}
    return _TraceScores(per_origin, clusters, resampled)


def field_rows(results: Sequence[TraceResult]) -> list[FieldRow]:
    """Every contender against the best of its rivals, cell by cell and over resamples."""
    rng = np.random.default_rng(GAP_SEED)
    traces = [_trace_scores(result, rng) for result in results]
    rows = []
    for contender in CONTENDERS:
        rivals = rivals_of(contender)
        at_or_below = behind = 0
        met_everywhere = np.ones(GAP_RESAMPLES, dtype=bool)
        for trace in traces:
            for h in range(len(SCORED_HORIZONS)):
                mine = trace.per_origin[contender][:, h]
                best = min(rivals, key=lambda name: float(trace.per_origin[name][:, h].mean()))
                theirs = trace.per_origin[best][:, h]
                at_or_below += bool(mine.mean() <= theirs.mean())
                behind += paired_gap(mine, theirs, trace.clusters).beyond_noise
                lowest_rival = np.min([trace.resampled[name][:, h] for name in rivals], axis=0)
                met_everywhere &= trace.resampled[contender][:, h] <= lowest_rival
        cells = len(traces) * len(SCORED_HORIZONS)
        rows.append(FieldRow(contender, cells, at_or_below, behind, float(met_everywhere.mean())))
    return rows
