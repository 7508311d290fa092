"""How forecasts become the report's figures: MASE, worst origins, bands and costs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchmarks.forecast_jobs import Outcome
from benchmarks.forecasting_accuracy import accuracy_rows, mean_outcome, paired_gap, score
from benchmarks.forecasting_coverage import WALK_SCORED, walk_standard_error
from benchmarks.forecasting_targets import Cost


def outcome(mean: list[float], half_width: float, seconds: float = 0.1) -> Outcome:
    centre = np.array(mean)
    return Outcome(centre, centre - half_width, centre + half_width, seconds)


def test_score_counts_the_load_inside_the_band() -> None:
    actual = np.array([10.0, 12.0, 14.0, 20.0, 10.0])
    scored = score("m", outcome([10.0] * 5, 3.0), actual, scale=2.0)
    assert scored.mase[0] == 0.0
    assert scored.mase[1] == pytest.approx(1.0 / 2.0)
    assert scored.mase[2] == pytest.approx((0 + 2 + 4 + 10 + 0) / 5 / 2.0)
    assert (scored.inside, scored.steps) == (3, 5)
    assert scored.width == pytest.approx(30.0)
    assert scored.load == pytest.approx(66.0)


def test_a_failed_forecast_scores_nothing() -> None:
    scored = score("m", Outcome(None, None, None, 0.5, "boom"), np.ones(5), 1.0)
    assert all(math.isnan(value) for value in scored.mase)
    assert (scored.inside, scored.steps, scored.problem) == (0, 0, "boom")


def test_rows_report_the_mean_the_worst_origin_and_the_ratio() -> None:
    actual = np.full(5, 10.0)
    scores = [
        score("seasonal_naive", outcome([12.0] * 5, 1.0), actual, 1.0),
        score("seasonal_naive", outcome([14.0] * 5, 1.0), actual, 1.0),
        score("m", outcome([11.0] * 5, 5.0, 0.2), actual, 1.0),
        score("m", outcome([16.0] * 5, 5.0, 0.4), actual, 1.0),
    ]
    rows = {row.model: row for row in accuracy_rows("t", scores)}
    model = rows["m"]
    assert model.mase == pytest.approx((3.5, 3.5, 3.5))
    assert model.worst == pytest.approx((6.0, 6.0, 6.0))
    assert model.ratio_to_seasonal_naive == pytest.approx((3.5 / 3.0,) * 3)
    assert model.coverage == pytest.approx(0.5)
    assert model.width == pytest.approx(1.0)
    assert model.seconds == pytest.approx(0.3)
    assert rows["seasonal_naive"].coverage == 0.0


def test_cpu_share_adds_hourly_selections_and_updates_every_thirty_seconds() -> None:
    cost = Cost("t", fresh=0.5, fresh_count=1, update=0.005, update_count=1)
    assert cost.cpu_share == pytest.approx(1000 * (0.5 / 3600 + 0.005 / 30))


def test_coverage_error_is_the_spread_of_whole_walks() -> None:
    # Two walks, one always inside the band and one inside half of its forecasts:
    # coverage 75 %, per-walk coverages 1.0 and 0.5, so std 0.354 over sqrt(2).
    inside = np.ones((2 * WALK_SCORED, 5), dtype=np.bool_)
    inside[WALK_SCORED : WALK_SCORED + WALK_SCORED // 2] = False
    assert walk_standard_error(inside, 2) == pytest.approx(np.std([1.0, 0.5], ddof=1) / 2**0.5)
    # Walks that agree leave no doubt; one walk says nothing about its spread.
    assert walk_standard_error(np.ones((2 * WALK_SCORED, 5), dtype=np.bool_), 2) == 0.0
    assert math.isnan(walk_standard_error(inside[:WALK_SCORED], 1))


def test_the_anchors_mean_averages_forecasts_and_bounds_and_fails_with_any_of_them() -> None:
    combined = mean_outcome([outcome([1.0, 3.0], 1.0, 0.2), outcome([3.0, 5.0], 3.0, 0.3)])
    assert combined.mean is not None
    assert combined.lower is not None
    assert combined.upper is not None
    assert combined.mean.tolist() == [2.0, 4.0]
    assert combined.lower.tolist() == [0.0, 2.0]
    assert combined.upper.tolist() == [4.0, 6.0]
    assert combined.seconds == pytest.approx(0.5)
    failed = Outcome(None, None, None, 0.1, "ValueError: no fit")
    assert mean_outcome([outcome([1.0], 1.0), failed]).problem == "ValueError: no fit"


def test_a_gap_every_origin_shows_is_beyond_noise() -> None:
    rng = np.random.default_rng(1)
    second = rng.uniform(0.5, 1.5, 60)
    gap = paired_gap(second + 0.05 + rng.normal(0, 0.01, 60), second, list(range(60)))
    assert gap.mean == pytest.approx(0.05, abs=0.005)
    assert 0.0 < gap.low < gap.mean < gap.high
    assert gap.beyond_noise


def test_a_gap_of_one_origin_is_noise() -> None:
    first = np.ones(60)
    first[7] = 4.0
    gap = paired_gap(first, np.ones(60), list(range(60)))
    assert gap.mean == pytest.approx(0.05)
    assert gap.low == 0.0
    assert not gap.beyond_noise


def test_origins_sharing_a_cluster_are_resampled_together() -> None:
    # Two clusters of 30 origins: one gap of +1 and one of -1 averages to 0 either way,
    # but as two draws the interval spans them, where 60 independent origins would not.
    first = np.concatenate([np.full(30, 2.0), np.zeros(30)])
    clustered = paired_gap(first, np.ones(60), [0] * 30 + [1] * 30)
    independent = paired_gap(first, np.ones(60), list(range(60)))
    assert clustered.low == pytest.approx(-1.0)
    assert clustered.high == pytest.approx(1.0)
    assert independent.high < 0.5


def test_a_gap_leaves_out_origins_either_model_failed_at() -> None:
    first = np.array([1.0, math.nan, 3.0])
    second = np.array([0.5, 1.0, math.nan])
    gap = paired_gap(first, second, [0, 1, 2])
    assert (gap.mean, gap.low, gap.high) == (0.5, 0.5, 0.5)
