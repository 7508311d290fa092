"""``auto``: backtest ranking, asymmetric error, fallback and the cached selection."""

from __future__ import annotations

import numpy as np
import pytest

from predictive_scaler.forecasting import Auto, ModelSelection, make_model, select_model
from predictive_scaler.forecasting.backtest import rolling_origins
from predictive_scaler.forecasting.base import ForecastModel
from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.forecasting.metrics import asymmetric_error, naive_scale
from predictive_scaler.forecasting.selection import CLOSE, MIN_WINS, RankedModel
from tests.conftest import seasonal_load


def test_rolling_origins_spread_from_the_training_minimum_to_the_last_full_horizon() -> None:
    assert rolling_origins(100, horizon=5, n_origins=3, min_train=50) == [50, 72, 95]
    assert rolling_origins(100, horizon=5, n_origins=30, min_train=80) == list(range(80, 96))
    assert rolling_origins(100, horizon=5, n_origins=1, min_train=80) == [80]
    assert rolling_origins(10, horizon=5, n_origins=3, min_train=8) == []


def test_under_forecasts_weigh_more_than_over_forecasts() -> None:
    actual = np.array([10.0, 10.0])
    under = asymmetric_error(actual, actual - 2.0, under_weight=3.0)
    over = asymmetric_error(actual, actual + 2.0, under_weight=3.0)
    assert under == pytest.approx(6.0)
    assert over == pytest.approx(2.0)


def test_naive_scale_is_never_zero() -> None:
    assert naive_scale(np.full(20, 3.0)) == 1.0
    assert naive_scale(np.array([1.0])) == 1.0
    assert naive_scale(np.array([1.0, 3.0, 2.0])) == pytest.approx(1.5)
    assert naive_scale(np.array([1.0, 3.0, 2.0, 4.0]), season_length=2) == pytest.approx(1.0)


def test_a_linear_trend_is_not_left_to_the_naive_model() -> None:
    y = 50.0 + 2.0 * np.arange(200.0) + np.random.default_rng(3).normal(0, 0.5, 200)
    model = Auto(candidates=["naive", "brown", "holt"]).fit(y)
    assert model.chosen_ in {"brown", "holt"}
    errors = model.backtest_errors_
    assert errors[model.chosen_] < errors["naive"] / 2


def test_ranking_is_by_backtest_error_and_exposed() -> None:
    y = seasonal_load(200)
    selection = select_model(y, candidates=["naive", "brown", "holt", "gm11"], horizon=3)

    # Models beating naive at most origins first, then the others; each by score, except
    # that a simpler model within CLOSE of the best goes first.
    def group(ranked: RankedModel) -> bool:
        return ranked.name != "naive" and ranked.wins < MIN_WINS

    keys = [(group(ranked), ranked.score) for ranked in selection.ranking]
    assert keys[1:] == sorted(keys[1:])
    first_group = [score for in_group, score in keys if in_group == keys[0][0]]
    assert keys[0][1] <= min(first_group) * (1 + CLOSE)
    names = set(selection.scores)
    assert {"naive", "brown", "holt", "gm11"} <= names
    # ... and the mean of the best three competes too.
    assert any(name.startswith("mean(") for name in names)
    assert all(ranked.errors.shape == (selection.origins, 3) for ranked in selection.ranking)


def test_the_asymmetric_error_prefers_the_model_that_errs_high() -> None:
    """Two models with equal absolute errors: the one under-forecasting ranks last."""
    y = np.tile([10.0, 20.0], 60)
    # On this zig-zag, naive is always wrong by 10 in both directions; seasonal
    # naive with a season of 2 is exact. Among wrong models, the error counts
    # misses below the actual three times.
    selection = select_model(y, candidates=["naive", "seasonal_naive"], horizon=1, season_length=2)
    assert selection.ranking[0].name == "seasonal_naive"
    assert selection.scores["naive"] > 0


def test_a_model_that_fails_in_backtest_is_reported_and_not_chosen() -> None:
    y = seasonal_load(30)  # gbdt needs 30 points before the first origin
    model = Auto(candidates=["gbdt", "brown"], horizon=2, n_origins=3).fit(y)
    assert model.chosen_ == "brown"
    failed = dict(model.selection_.failures)
    assert "gbdt" in failed
    assert model.backtest_errors_["gbdt"] == float("inf")


def test_an_exploding_model_is_passed_over_for_the_next_one() -> None:
    # Exponential growth is GM(1,1)'s own shape, so it wins the backtest, but
    # five steps on it forecasts more than ten times the peak: absurd for load.
    # The backtest's range guard already sees it leave the history's range.
    y = np.exp(0.5 * np.arange(30.0))
    model = Auto(candidates=["gm11", "naive"], horizon=5, n_origins=2).fit(y)
    assert model.chosen_ == "naive"
    assert "left the history's range" in dict(model.selection_.failures)["gm11"]


def test_cached_selection_refits_without_a_new_backtest() -> None:
    y = seasonal_load(300)
    first = Auto(candidates=["naive", "brown", "holt", "arima"]).fit(y[:280])
    refit = Auto(selection=first.selection_).fit(y)
    assert refit.selection_ is first.selection_
    assert refit.chosen_ == first.chosen_
    # The refit sees the newer data: its forecast starts from the new end.
    assert not np.allclose(refit.predict(1).mean, first.predict(1).mean)


def test_auto_interval_covers_about_its_level_out_of_sample() -> None:
    """Calibrated on backtest errors: the 80 % band holds about 80 % of what comes next."""
    rng = np.random.default_rng(11)
    covered: list[bool] = []
    for _ in range(60):
        y = 100 + np.cumsum(rng.normal(0, 1, 301)) + rng.normal(0, 2, 301)
        model = Auto(candidates=["naive", "brown", "holt"], n_origins=40).fit(y[:300])
        forecast = model.predict(1, level=0.8)
        covered.append(bool(forecast.lower[0] <= y[300] <= forecast.upper[0]))
    assert 0.7 <= np.mean(covered) <= 0.92


def test_too_short_for_any_backtest_falls_back_to_naive() -> None:
    model = Auto().fit([3.0, 4.0, 5.0])
    assert model.chosen_ == "naive"
    assert model.selection_.origins == 0
    assert model.predict(2).mean.tolist() == [5.0, 5.0]


def test_describe_names_the_choice_and_the_scores() -> None:
    model = Auto(candidates=["naive", "brown"]).fit(seasonal_load(120))
    text = model.describe()
    assert text.startswith(f"auto chose {model.chosen_}")
    assert "naive" in text
    assert "brown" in text


class NonFiniteModel(ForecastModel):
    """A model whose forecast is NaN: what a broken numerical model looks like."""

    name = "non_finite"

    def _fit(self, y: FloatArray) -> FloatArray:
        return np.diff(y)

    def _predict_mean(self, h: int) -> FloatArray:
        return np.full(h, np.nan)


def test_a_model_forecasting_non_finite_values_is_passed_over() -> None:
    errors = np.zeros((2, 3))
    selection = ModelSelection(
        ranking=(
            RankedModel("non_finite", 0.1, errors, NonFiniteModel()),
            RankedModel("brown", 0.2, errors, make_model("brown")),
        ),
        failures=(),
        horizon=3,
        origins=2,
    )
    model = Auto(selection=selection).fit(seasonal_load(100))
    assert model.chosen_ == "brown"
    assert model.skipped_[0][0] == "non_finite"
    assert "non-finite" in model.skipped_[0][1]
    assert np.isfinite(model.predict(3).mean).all()
