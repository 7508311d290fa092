"""Models against published or hand-computed values, and against statsmodels itself."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from statsmodels.tsa.arima.model import ARIMA
from statsmodels.tsa.exponential_smoothing.ets import ETSModel
from statsmodels.tsa.forecasting.theta import ThetaModel

import predictive_scaler.forecasting.models.arima as arima_module
from predictive_scaler.forecasting import clean_series
from predictive_scaler.forecasting.models.arima import APPROXIMATE_ABOVE, Arima
from predictive_scaler.forecasting.models.arima_rules import (
    approximate_criterion,
    css_fit,
    css_residuals,
    differencing_order,
    invert_ma,
    on_invertibility_boundary,
)
from predictive_scaler.forecasting.models.baseline import Naive, SeasonalNaive
from predictive_scaler.forecasting.models.grey import GM11, fit_gm11, precision_grade
from predictive_scaler.forecasting.models.smoothing import (
    ETS_CONFIGS,
    Brown,
    Ets,
    Holt,
    relative_forecast_variance,
)
from predictive_scaler.forecasting.models.theta import Theta, prefix_slopes
from predictive_scaler.traces import read_trace
from tests.conftest import seasonal_load

GREY_EXAMPLE = np.array([2.874, 3.278, 3.337, 3.390, 3.679])


def test_gm11_reproduces_the_worked_example_of_design_md() -> None:
    model = GM11(window=5).fit(GREY_EXAMPLE)
    assert model.a_ == pytest.approx(-0.037204, abs=5e-7)
    assert model.b_ == pytest.approx(3.065363, abs=5e-7)


def test_gm11_restores_the_series_by_differencing_the_time_response() -> None:
    model = GM11(window=5).fit(GREY_EXAMPLE)
    a, b, x0_1 = model.a_, model.b_, GREY_EXAMPLE[0]

    def accumulated(k: float) -> float:
        return float((x0_1 - b / a) * np.exp(-a * k) + b / a)

    expected_next = accumulated(5) - accumulated(4)
    assert model.predict(1).mean[0] == pytest.approx(expected_next, rel=1e-12)


def test_gm11_precision_test_on_the_worked_example() -> None:
    model = GM11(window=5).fit(GREY_EXAMPLE)
    fitted = model.grey_.restored(np.arange(5.0))
    residuals = GREY_EXAMPLE - fitted
    spread = np.std(GREY_EXAMPLE)
    assert model.posterior_error_ratio_ == pytest.approx(np.std(residuals) / spread)
    share = np.mean(np.abs(residuals - residuals.mean()) < 0.6745 * spread)
    assert model.small_error_probability_ == pytest.approx(share)
    assert model.posterior_error_ratio_ <= 0.35
    assert model.precision_grade_ == "good"


@pytest.mark.parametrize(
    ("ratio", "probability", "grade"),
    [
        (0.35, 0.95, "good"),
        (0.36, 0.95, "qualified"),
        (0.2, 0.9, "qualified"),
        (0.6, 0.7, "barely"),
        (0.7, 1.0, "unqualified"),
        (0.1, 0.5, "unqualified"),
    ],
)
def test_precision_grades_follow_grey_theory(ratio: float, probability: float, grade: str) -> None:
    assert precision_grade(ratio, probability) == grade


def test_gm11_uses_only_its_recent_window() -> None:
    long_history = np.concatenate([np.full(50, 1000.0), GREY_EXAMPLE])
    assert GM11(window=5).fit(long_history).a_ == pytest.approx(fit_gm11(GREY_EXAMPLE).a)


def test_gm11_on_a_constant_window_forecasts_the_constant() -> None:
    model = GM11().fit(np.full(10, 7.0))
    np.testing.assert_allclose(model.predict(3).mean, 7.0, rtol=1e-9)
    assert model.posterior_error_ratio_ == 0.0
    assert model.small_error_probability_ == 1.0


def test_brown_against_a_hand_computed_series() -> None:
    # alpha = 0.5 on y = 1, 3, 2, 6 (S1 = S2 = y0 = 1):
    #   S1: 1, 2, 2, 4          S2: 1, 1.5, 1.75, 2.875
    #   A = 2*S1 - S2 = 5.125   B = 0.5/0.5 * (4 - 2.875) = 1.125
    model = Brown(alpha=0.5).fit([1.0, 3.0, 2.0, 6.0])
    assert model.level_ == pytest.approx(5.125)
    assert model.trend_ == pytest.approx(1.125)
    np.testing.assert_allclose(model.predict(3).mean, [6.25, 7.375, 8.5])
    # One-step in-sample forecasts A_t + B_t: 1, 2.5+0.5, 2.25+0.25 -> residuals 2, -1, 3.5
    np.testing.assert_allclose(model.residuals_, [2.0, -1.0, 3.5])


def test_brown_with_a_small_alpha_smooths_more() -> None:
    noisy = seasonal_load(200)
    smooth, reactive = Brown(alpha=0.1).fit(noisy), Brown(alpha=0.9).fit(noisy)
    assert np.std(np.diff(smooth.residuals_)) < np.std(np.diff(reactive.residuals_))


def test_holt_matches_statsmodels_ets_directly() -> None:
    y = seasonal_load(200)
    ours = Holt().fit(y).predict(6, level=0.9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = ETSModel(pd.Series(y), error="add", trend="add").fit(disp=False)
    frame = results.get_prediction(start=200, end=205).summary_frame(alpha=0.1)
    np.testing.assert_allclose(ours.mean, frame["mean"], rtol=1e-9)
    np.testing.assert_allclose(ours.upper, frame["pi_upper"], rtol=1e-9)
    np.testing.assert_allclose(ours.lower, np.maximum(frame["pi_lower"], 0.0), rtol=1e-9)


def statsmodels_ets(y: np.ndarray, trend: str | None, damped: bool) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = ETSModel(pd.Series(y), error="add", trend=trend, damped_trend=damped)
        return model.fit(disp=False)


@pytest.mark.parametrize("config", ETS_CONFIGS)
def test_the_relative_forecast_variance_is_statsmodels_closed_form(
    config: tuple[str | None, bool],
) -> None:
    y = seasonal_load(200)
    results = statsmodels_ets(y, *config)
    prediction = results.get_prediction(start=200, end=229)
    expected = np.asarray(prediction.var_pred_mean) / results.mse
    named = dict(zip(results.model.param_names, np.asarray(results.params).tolist(), strict=True))
    ours = relative_forecast_variance(config, named, 30)
    np.testing.assert_allclose(ours, expected, rtol=1e-9)
    # The variance grows with the horizon wherever the level adapts at all.
    assert np.all(np.diff(ours) > 0.0)


def test_ets_keeps_the_form_with_the_lowest_aicc() -> None:
    y = seasonal_load(200)
    model = Ets().fit(y)
    scores = {config: statsmodels_ets(y, *config).aicc for config in ETS_CONFIGS}
    assert model.config_ == min(scores, key=lambda config: scores[config])
    assert model.information_criterion_ == pytest.approx(min(scores.values()), rel=1e-9)


def test_ets_matches_statsmodels_for_the_form_it_chose() -> None:
    y = seasonal_load(200)
    model = Ets().fit(y)
    ours = model.predict(4, level=0.8)
    frame = (
        statsmodels_ets(y, *model.config_)
        .get_prediction(start=200, end=203)
        .summary_frame(alpha=0.2)
    )
    np.testing.assert_allclose(ours.mean, frame["mean"], rtol=1e-9)
    np.testing.assert_allclose(ours.upper, frame["pi_upper"], rtol=1e-9)


def test_ets_on_a_trendless_level_chooses_simple_smoothing() -> None:
    level = 50.0 + np.random.default_rng(5).normal(0, 3, 300)
    assert Ets().fit(level).config_ == (None, False)


def test_ets_refit_with_its_structure_keeps_the_form_without_searching() -> None:
    y = seasonal_load(200)
    template = Ets().fit(y[:150]).clone_with_fitted_structure()
    assert isinstance(template, Ets)
    refit = template.fit(y)
    assert refit.config_ == template.config
    assert refit.start_params is not None


def test_arima_matches_statsmodels_with_the_order_it_chose() -> None:
    y = seasonal_load(250)
    model = Arima().fit(y)
    ours = model.predict(5, level=0.8)
    trend = "c" if model.order_[1] == 0 else "n"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = ARIMA(y, order=model.order_, trend=trend).fit()
    frame = results.get_forecast(5).summary_frame(alpha=0.2)
    # Ours starts the likelihood's optimiser from the CSS estimates of the order
    # search and stops after WARM_START_ITERATIONS, statsmodels runs from its own
    # start to convergence: the same model by its information criterion (within
    # 2, Burnham and Anderson's "substantial support"), and forecasts a small
    # share of the interval apart.
    assert abs(model.information_criterion_ - results.aic) < 2.0
    half_width = frame["mean_ci_upper"] - frame["mean"]
    assert (np.abs(ours.mean - frame["mean"]) < 0.2 * half_width).all()
    assert (np.abs(ours.upper - frame["mean_ci_upper"]) < 0.2 * half_width).all()


@pytest.mark.parametrize(
    "points",
    [250, APPROXIMATE_ABOVE],
    ids=["long window, approximate search", "short window, exact likelihood"],
)
def test_arima_order_search_keeps_the_lowest_information_criterion(points: int) -> None:
    # On this series the approximate search (long windows) finds the order
    # exact likelihood prefers; short windows search by exact likelihood.
    y = seasonal_load(250)[-points:]
    model = Arima().fit(y)
    d = model.order_[1]
    trend = "c" if d == 0 else "n"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        others = [
            ARIMA(y, order=(p, d, q), trend=trend).fit().aic for p in range(3) for q in range(3)
        ]
    assert (model.order_[0], model.order_[2]) == divmod(int(np.argmin(others)), 3)
    # Short windows fit every order cold, to convergence: the same criterion.
    # Long windows fit the order found by CSS from its CSS estimates for
    # WARM_START_ITERATIONS: the same model by its criterion (within 2).
    tolerance = 2.0 if points > APPROXIMATE_ABOVE else 1e-6
    assert abs(model.information_criterion_ - min(others)) < tolerance


@pytest.mark.parametrize("d", [0, 1])
@pytest.mark.parametrize("criterion", ["aic", "bic", "aicc"])
def test_the_criterion_from_the_likelihood_is_the_filtered_results_own(
    d: int, criterion: str
) -> None:
    # The short-window search scores every order without building its results:
    # only the order kept is filtered. The two must agree to the bit, or the
    # search would rank orders differently from statsmodels.
    y = seasonal_load(72)
    y = np.cumsum(y - y.mean()) if d else y
    for p in range(3):
        for q in range(3):
            model = ARIMA(y, order=(p, d, q), trend="c" if d == 0 else "n")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                params = arima_module.estimates(model, None)
            results = model.filter(params, cov_type="none")
            assert arima_module.criterion_at(model, params, criterion) == getattr(
                results, criterion
            )


def test_css_recovers_an_arma_process() -> None:
    rng = np.random.default_rng(3)
    noise = rng.normal(0.0, 1.0, 3000)
    x = np.zeros(3000)
    for t in range(1, 3000):
        x[t] = 0.6 * x[t - 1] + noise[t] + 0.3 * noise[t - 1]
    params, variance = css_fit(x + 50.0, 1, 1, mean=True)
    np.testing.assert_allclose(params, [50.0, 0.6, 0.3], atol=0.08)
    assert variance == pytest.approx(1.0, rel=0.1)


@pytest.mark.parametrize(("p", "q"), [(1, 1), (2, 2), (0, 2)])
def test_css_estimates_are_a_minimum_of_the_sum_of_squares(p: int, q: int) -> None:
    x = seasonal_load(250)
    params, variance = css_fit(x, p, q, mean=True)
    assert variance == pytest.approx(np.mean(css_residuals(params, x, p, q, True) ** 2))
    for index in range(params.size):
        for step in (-1e-3, 1e-3):
            moved = params.copy()
            moved[index] += step * max(1.0, abs(moved[index]))
            assert np.mean(css_residuals(moved, x, p, q, True) ** 2) >= variance * (1 - 1e-9)


def test_the_approximate_search_ranks_orders_by_their_css_criterion() -> None:
    y = seasonal_load(250)
    model = Arima().fit(y)
    d = model.order_[1]
    x = np.diff(y, d) if d else y

    def criterion(p: int, q: int) -> float:
        _, variance = css_fit(x, p, q, mean=d == 0)
        return approximate_criterion(variance, x.size, p + q + int(d == 0) + 1, "aic")

    scores = {(p, q): criterion(p, q) for p in range(3) for q in range(3)}
    p, q = min(scores, key=lambda order: scores[order])
    assert model.order_ == (p, d, q)


def autocovariances(theta: np.ndarray) -> np.ndarray:
    """Autocovariances at lags 0..q of an MA(q) with unit innovations."""
    psi = np.concatenate([[1.0], theta])
    return np.array([psi[: psi.size - lag] @ psi[lag:] for lag in range(psi.size)])


@pytest.mark.parametrize(
    "theta", [[2.0], [0.5, -1.6], [-2.5, 1.5], [0.3, 0.2]], ids=["ma1", "real", "complex", "fine"]
)
def test_invert_ma_keeps_the_autocorrelations_with_every_root_outside(theta: list[float]) -> None:
    original = np.array(theta)
    inverted = invert_ma(original)
    roots = np.roots(np.concatenate([[1.0], inverted])[::-1])
    assert (np.abs(roots) > 1.0).all()
    # The same process up to the innovations' variance: the same autocorrelations.
    before, after = autocovariances(original), autocovariances(inverted)
    np.testing.assert_allclose(after / after[0], before / before[0], atol=1e-12)
    if (np.abs(np.roots(np.concatenate([[1.0], original])[::-1])) > 1.0).all():
        np.testing.assert_array_equal(inverted, original)


def top_css_order(window: np.ndarray) -> tuple[tuple[int, int, int], np.ndarray]:
    """The order the approximate search ranks first, and its CSS estimates."""
    d = differencing_order(window, 1)
    x = np.diff(window, d) if d else window
    scored = []
    for p in range(3):
        for q in range(3):
            params, variance = css_fit(x, p, q, mean=d == 0)
            score = approximate_criterion(variance, x.size, p + q + int(d == 0) + 1, "aic")
            scored.append((score, (p, d, q), params))
    _, order, params = min(scored, key=lambda item: item[0])
    return order, params


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize(
    ("start", "trouble"),
    [(2500, "AR part not stationary"), (4000, "MA part not invertible")],
)
def test_the_approximate_search_fits_only_from_css_estimates_under_r_rules(
    traces_dir: Path, monkeypatch: pytest.MonkeyPatch, start: int, trouble: str
) -> None:
    trace = read_trace(traces_dir / "alibaba_2018_cluster_usage_30s.csv.gz", "cpu_util_percent")
    window = clean_series(trace.values)[start : start + 600]
    order, params = top_css_order(window)
    offset = int(order[1] == 0)
    phi, theta = params[offset : offset + order[0]], params[offset + order[0] :]
    ar_roots = np.abs(np.roots(np.concatenate([[1.0], -phi])[::-1]))
    ma_roots = np.abs(np.roots(np.concatenate([[1.0], theta])[::-1]))
    # The window is what the case says: the best CSS order has that defect.
    assert (ar_roots.min() <= 1.0) == (trouble == "AR part not stationary")
    assert (ma_roots.min() < 1.0) == (trouble == "MA part not invertible")
    starts: list[Any] = []
    real_fit = arima_module.maximum_likelihood

    def recording(model: ARIMA, start_params: Any) -> Any:
        starts.append(start_params)
        return real_fit(model, start_params)

    monkeypatch.setattr(arima_module, "maximum_likelihood", recording)
    model = Arima().fit(window)
    # No fit from statsmodels' own start (50 iterations): R's CSS-ML skips a
    # non-stationary order and starts an MA part from its invertible form.
    assert starts
    assert all(start_params is not None for start_params in starts)
    if trouble == "AR part not stationary":
        assert model.order_ != order
    assert not on_invertibility_boundary(model.results_)
    assert np.isfinite(model.information_criterion_)


def test_arima_differences_a_trending_series() -> None:
    trend = np.arange(300.0) * 2.0 + np.random.default_rng(1).normal(0, 1, 300)
    assert Arima().fit(trend).order_[1] == 1


def test_arima_with_a_fixed_order_does_not_search() -> None:
    model = Arima(order=(1, 0, 0)).fit(seasonal_load(120))
    assert model.order_ == (1, 0, 0)


def test_naive_repeats_the_last_value() -> None:
    np.testing.assert_array_equal(Naive().fit([3.0, 5.0, 4.0]).predict(3).mean, [4.0, 4.0, 4.0])


def test_seasonal_naive_repeats_the_last_season() -> None:
    y = [1.0, 2.0, 3.0, 10.0, 20.0, 30.0]
    np.testing.assert_array_equal(
        SeasonalNaive(season_length=3).fit(y).predict(5).mean, [10.0, 20.0, 30.0, 10.0, 20.0]
    )


def test_seasonal_naive_without_a_full_season_is_naive() -> None:
    model = SeasonalNaive(season_length=10).fit([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(model.predict(2).mean, [3.0, 3.0])


@pytest.mark.parametrize("drift", [0.3, 0.0, -0.2])
def test_theta_forecasts_as_statsmodels_theta_model(drift: float) -> None:
    y = 80.0 + np.cumsum(np.random.default_rng(3).normal(drift, 1.0, 250))
    expected = ThetaModel(y, deseasonalize=False).fit().forecast(6)
    np.testing.assert_allclose(Theta().fit(y).predict(6).mean, expected, rtol=1e-9)


def test_theta_with_a_given_weight_does_not_estimate_it() -> None:
    y = seasonal_load(120)
    assert Theta(alpha=0.25).fit(y).alpha_ == 0.25
    assert 0.0 <= Theta().fit(y).alpha_ <= 1.0


def test_theta_without_smoothing_drifts_from_the_first_value() -> None:
    # alpha = 0 keeps the first value as the level; the drift then spans the whole window.
    y = np.array([10.0, 12.0, 14.0, 16.0, 18.0, 20.0, 22.0, 24.0, 26.0, 28.0])
    mean = Theta(alpha=0.0).fit(y).predict(2).mean
    np.testing.assert_allclose(mean, [10.0 + 1.0 * 10, 10.0 + 1.0 * 11])


def test_prefix_slopes_are_least_squares_slopes() -> None:
    y = np.random.default_rng(4).normal(0.0, 1.0, 40).cumsum()
    ends = np.array([2, 7, 25, 40])
    expected = [np.polyfit(np.arange(end), y[:end], 1)[0] for end in ends]
    np.testing.assert_allclose(prefix_slopes(y, ends), expected, rtol=1e-9, atol=1e-12)
