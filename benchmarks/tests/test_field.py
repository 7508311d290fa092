"""The first forecasting target asked of every contender: cells, noise and resamples."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.forecast_jobs import ANCHORS
from benchmarks.forecast_runs import TRACES
from benchmarks.forecasting_accuracy import ANCHORS_MEAN, TraceResult
from benchmarks.forecasting_field import CONTENDERS, field_rows, rivals_of
from benchmarks.forecasting_targets import field_text
from predictive_scaler.forecasting import Auto
from predictive_scaler.forecasting.forecast import FloatArray

ORIGINS = 60


def trace(per_origin: dict[str, FloatArray]) -> TraceResult:
    return TraceResult(
        TRACES[0], 0, 60.0, 1, ORIGINS, 360, (0, 0), (), (), (), per_origin, tuple(range(ORIGINS))
    )


def scores(seed: int, offsets: dict[str, float]) -> dict[str, FloatArray]:
    """Every contender's per-origin MASE: one shared load, each its own noise and offset."""
    rng = np.random.default_rng(seed)
    shared = rng.uniform(0.5, 1.5, (ORIGINS, 3))
    return {
        name: shared + offsets.get(name, 0.0) + rng.normal(0.0, 0.05, (ORIGINS, 3))
        for name in CONTENDERS
    }


def by_name(results: list[TraceResult]) -> dict[str, tuple[int, int, float]]:
    return {
        row.contender: (row.at_or_below, row.behind_beyond_noise, row.resampled_share)
        for row in field_rows(results)
    }


def test_an_anchor_is_compared_with_the_other_three_and_auto_with_all_four() -> None:
    assert rivals_of(Auto.name) == ANCHORS
    assert rivals_of(ANCHORS_MEAN) == ANCHORS
    for anchor in ANCHORS:
        assert rivals_of(anchor) == tuple(name for name in ANCHORS if name != anchor)


def test_a_contender_clearly_ahead_everywhere_meets_the_target_in_every_resample() -> None:
    offsets = {name: 0.3 for name in ANCHORS} | {ANCHORS_MEAN: 0.3}
    field = by_name([trace(scores(seed, offsets)) for seed in range(4)])
    assert field[Auto.name] == (12, 0, 1.0)
    # Every anchor has equal rivals. The best of them, picked after the fact, can look
    # ahead of it beyond the paired interval in a few cells (the interval does not know
    # the rival was picked as the lowest of three), never in most.
    for anchor in ANCHORS:
        at_or_below, behind, share = field[anchor]
        assert at_or_below < 12
        assert behind < 6
        assert share < 0.5
    # The anchors' mean is compared with the anchors and is no better than they are.
    assert field[ANCHORS_MEAN][2] < 0.5


def test_a_contender_clearly_behind_is_behind_beyond_noise_and_never_meets_it() -> None:
    field = by_name([trace(scores(seed, {Auto.name: 0.2})) for seed in range(4)])
    assert field[Auto.name] == (0, 12, 0.0)


def test_equal_contenders_meet_it_by_chance_in_a_few_resamples_at_most() -> None:
    # Auto as good as the anchors: the best of four, picked after the fact in twelve
    # cells, leaves it below every one of them only by luck.
    field = by_name([trace(scores(seed, {})) for seed in range(4)])
    at_or_below, behind, share = field[Auto.name]
    assert behind < 6
    assert at_or_below < 12
    assert share < 0.05


def test_origins_a_contender_failed_at_are_left_out_for_every_contender() -> None:
    per_origin = scores(0, {name: 0.3 for name in ANCHORS} | {ANCHORS_MEAN: 0.3})
    # At the origins where AutoETS failed, auto is far behind: they must not count.
    per_origin["AutoETS"][:10] = np.nan
    per_origin[Auto.name][:10] = 50.0
    field = by_name([trace(per_origin)])
    assert field[Auto.name] == (3, 0, 1.0)


def test_the_check_names_each_contender_with_its_cells_and_resamples() -> None:
    text = field_text(field_rows([trace(scores(0, {}))]))
    for name in CONTENDERS:
        assert f"{name} " in text
    assert "of 3 cells" not in text
    assert text.count("/3 cells") == len(CONTENDERS)


@pytest.mark.parametrize("contender", CONTENDERS)
def test_every_contender_has_a_row(contender: str) -> None:
    assert contender in by_name([trace(scores(0, {}))])
