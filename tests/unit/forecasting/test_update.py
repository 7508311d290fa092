"""``update``: new observations with the fitted parameters, and the schedule that uses it."""

from __future__ import annotations

import numpy as np
import pytest

from predictive_scaler.forecasting import (
    MODEL_NAMES,
    Forecast,
    ForecastModel,
    ScheduledSelection,
    make_model,
)
from predictive_scaler.forecasting.models.arima import Arima
from predictive_scaler.forecasting.models.moving_window import overlap
from predictive_scaler.forecasting.models.smoothing import (
    ETS_CONFIGS,
    Ets,
    Holt,
    ets_model,
    fit_ets,
)
from predictive_scaler.forecasting.seasonal import Deseasonalized
from predictive_scaler.forecasting.seasons import TimedSeries
from tests.conftest import seasonal_load

SERIES = seasonal_load(300)


def build(name: str) -> ForecastModel:
    return make_model(name, season_length=24)


def assert_valid(forecast: Forecast, h: int) -> None:
    for values in (forecast.mean, forecast.lower, forecast.upper):
        assert values.shape == (h,)
        assert np.isfinite(values).all()
        assert (values >= 0).all()
    assert (forecast.lower <= forecast.mean).all()
    assert (forecast.mean <= forecast.upper).all()


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_update_with_new_points_gives_a_valid_forecast_from_the_new_end(name: str) -> None:
    model = build(name).fit(SERIES[:-5])
    before = model.predict(4, 0.9)
    assert model.update(SERIES) is model
    assert not model.is_degraded, model.fallback_reason_
    np.testing.assert_array_equal(model.y_, SERIES)
    after = model.predict(4, 0.9)
    assert_valid(after, 4)
    assert after.model == name
    assert after.level == 0.9
    assert after.notes == ()
    # The forecast starts from the new end of the series, not the old one.
    assert not np.allclose(after.mean, before.mean)
    # Nothing absurd: it stays within the range the series has shown.
    assert SERIES.min() * 0.5 < after.mean[0] < SERIES.max() * 1.5


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_update_on_an_unfitted_model_is_fit(name: str) -> None:
    updated = build(name).update(SERIES).predict(4, 0.9)
    fitted = build(name).fit(SERIES).predict(4, 0.9)
    np.testing.assert_allclose(updated.mean, fitted.mean, rtol=1e-12)
    np.testing.assert_allclose(updated.lower, fitted.lower, rtol=1e-12)
    np.testing.assert_allclose(updated.upper, fitted.upper, rtol=1e-12)


def test_update_on_a_degraded_model_refits() -> None:
    model = make_model("arima").fit(SERIES[:5])  # arima needs 10 points: naive stands in
    assert model.is_degraded
    model.update(SERIES)
    assert not model.is_degraded
    fresh = make_model("arima").fit(SERIES).predict(3)
    np.testing.assert_allclose(model.predict(3).mean, fresh.mean, rtol=1e-9)


def test_arima_update_keeps_its_parameters_and_moves_its_forecast() -> None:
    model = make_model("arima").fit(SERIES[:-5])
    assert isinstance(model, Arima)
    params = np.array(model.params_, copy=True)
    order = model.order_
    before = model.predict(3, 0.9)
    model.update(SERIES)
    np.testing.assert_array_equal(model.params_, params)
    assert model.order_ == order
    after = model.predict(3, 0.9)
    assert not np.allclose(after.mean, before.mean)
    # A refit on the same data would estimate new parameters: update did not refit.
    refit = make_model("arima").fit(SERIES)
    assert isinstance(refit, Arima)
    assert not np.allclose(refit.params_, params)


def test_holt_update_keeps_its_parameters() -> None:
    model = make_model("holt").fit(SERIES[:-5])
    assert isinstance(model, Holt)
    params = np.array(model.params_, copy=True)
    before = model.predict(3)
    model.update(SERIES)
    np.testing.assert_array_equal(model.params_, params)
    assert not np.allclose(model.predict(3).mean, before.mean)


@pytest.mark.parametrize(
    ("dropped", "added", "expected"),
    [(0, 0, 100), (1, 1, 99), (10, 3, 90), (0, 7, 100), (40, 40, 60), (60, 60, None)],
)
def test_overlap_counts_the_points_a_moved_window_already_saw(
    dropped: int, added: int, expected: int | None
) -> None:
    previous = SERIES[:100]
    window = SERIES[dropped : 100 + added]
    assert overlap(previous, window) == expected


def test_overlap_is_none_for_a_window_that_does_not_continue() -> None:
    assert overlap(SERIES[:100], SERIES[:100][::-1]) is None
    # Its first 99 points are the last's, but the last value was revised.
    revised = SERIES[1:101].copy()
    revised[98] += 1.0
    assert overlap(SERIES[:100], revised) is None


@pytest.mark.parametrize("order", [(1, 0, 1), (2, 1, 2)])
def test_an_arima_update_that_moves_the_window_on_continues_statsmodels_filter(
    order: tuple[int, int, int],
) -> None:
    # The window drops its first 5 points and gains 20: the update filters the 20
    # from where the fit's filter ended, so it is statsmodels' filter (no smoother)
    # with the fitted parameters over everything from the fitted window's start.
    model = Arima(order=order).fit(SERIES[:-20])
    reference = model.results_.apply(SERIES)
    model.update(SERIES[5:])
    np.testing.assert_allclose(
        model.residuals_, np.asarray(reference.resid)[5 + 1 + order[1] :], rtol=1e-9, atol=1e-9
    )
    np.testing.assert_allclose(model.forecast_mean(6), reference.forecast(6), rtol=1e-9)
    frame = reference.get_forecast(4).summary_frame(alpha=0.2)
    np.testing.assert_allclose(model.predict(4, 0.8).upper, frame["mean_ci_upper"], rtol=1e-9)


def test_successive_arima_updates_continue_their_filter_or_filter_a_new_window() -> None:
    # statsmodels caches the data first bound to a filter; each update must see its own.
    model = Arima(order=(2, 0, 1)).fit(SERIES[:200])
    fitted = model.results_
    # Two windows that move on (points added; points dropped and added), then one
    # that does not continue the last: it is filtered afresh from its own start.
    for window, seen in (
        (SERIES[:210], SERIES[:210]),
        (SERIES[10:220], SERIES[:220]),
        (SERIES[:225], SERIES[:225]),
        (SERIES[:225], SERIES[:225]),
    ):
        model.update(window)
        np.testing.assert_array_equal(model.params_, fitted.params)  # filtered, not refitted
        reference = fitted.apply(seen)
        residuals = np.asarray(reference.resid)[seen.size - window.size + 1 :]
        np.testing.assert_allclose(model.residuals_, residuals, rtol=1e-9, atol=1e-7)
        np.testing.assert_allclose(model.forecast_mean(3), reference.forecast(3), rtol=1e-9)


def test_an_arima_update_refilters_a_window_that_repeats_too_little_of_the_last() -> None:
    model = Arima(order=(1, 0, 1)).fit(SERIES[:100])
    # 40 of the 100 points already filtered: under half of the window, filtered afresh.
    window = SERIES[60:160]
    expected = model.results_.apply(window)
    model.update(window)
    np.testing.assert_allclose(model.forecast_mean(3), expected.forecast(3), rtol=1e-9)
    np.testing.assert_allclose(
        model.residuals_, np.asarray(expected.resid)[1:], rtol=1e-9, atol=1e-7
    )


@pytest.mark.parametrize("config", ETS_CONFIGS)
def test_an_ets_fit_is_statsmodels_fit_without_its_results_object(
    config: tuple[str | None, bool],
) -> None:
    reference = ets_model(SERIES, 2000, config).fit(disp=False)
    fit = fit_ets(SERIES, 2000, config)
    np.testing.assert_array_equal(fit.params, np.asarray(reference.params))
    assert fit.aicc == pytest.approx(reference.aicc, rel=1e-12)
    model = Ets(config=config).fit(SERIES)
    assert model.information_criterion_ == pytest.approx(reference.aicc, rel=1e-12)
    np.testing.assert_allclose(model.residuals_, reference.resid, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(model.forecast_mean(6), reference.forecast(6), rtol=1e-9)


@pytest.mark.parametrize("config", ETS_CONFIGS)
def test_an_ets_update_that_moves_the_window_on_continues_statsmodels_smoothing(
    config: tuple[str | None, bool],
) -> None:
    # The window drops 5 points and gains 20: the update smooths the 20 from the
    # state where the fit's pass ended, so it is statsmodels' smooth() with the
    # fitted parameters over everything from the fitted window's start.
    model = Ets(config=config).fit(SERIES[:-20])
    params = np.array(model.params_, copy=True)
    model.update(SERIES[5:])
    reference = ets_model(SERIES, 2000, config).smooth(params)
    np.testing.assert_allclose(model.residuals_, reference.resid[5:], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(model.forecast_mean(6), reference.forecast(6), rtol=1e-9)
    # statsmodels' interval, its mean squared error taken over the window's errors.
    interval = reference.get_prediction(start=reference.nobs, end=reference.nobs + 3)
    frame = interval.summary_frame(alpha=0.2)
    scale = np.sqrt(np.mean(reference.resid[5:] ** 2) / reference.mse)
    forecast = model.predict(4, 0.8)
    lower = frame["mean"] - scale * (frame["mean"] - frame["pi_lower"])
    np.testing.assert_allclose(forecast.lower, np.clip(lower, 0, None), rtol=1e-9)
    upper = frame["mean"] + scale * (frame["pi_upper"] - frame["mean"])
    np.testing.assert_allclose(forecast.upper, upper, rtol=1e-9)


@pytest.mark.parametrize("config", ETS_CONFIGS)
def test_an_ets_update_on_another_window_smooths_it_from_the_fitted_initial_states(
    config: tuple[str | None, bool],
) -> None:
    model = Ets(config=config).fit(SERIES[:100])
    params = np.array(model.params_, copy=True)
    # 40 of the window's 100 points were seen: under half, so not taken as moved on.
    model.update(SERIES[60:160])
    reference = ets_model(SERIES[60:160], 2000, config).smooth(params)
    np.testing.assert_allclose(model.residuals_, reference.resid, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(model.forecast_mean(6), reference.forecast(6), rtol=1e-9)
    # The same window again: nothing new, the same forecast.
    model.update(SERIES[60:160])
    np.testing.assert_allclose(model.forecast_mean(6), reference.forecast(6), rtol=1e-9)


# --- ScheduledSelection -------------------------------------------------------------------


def timed(values: np.ndarray) -> TimedSeries:
    """A window of a 1-minute clock that starts at zero."""
    return TimedSeries(np.asarray(values, dtype=np.float64), 60.0, 60.0 * (values.size - 1))


def test_scheduled_selection_refits_only_after_refresh_seconds() -> None:
    selection = ScheduledSelection("brown", refresh_seconds=600.0)
    first = selection.forecast_series(timed(SERIES[:200]), 3, 0.9, 0.0)
    fitted = selection.fitted
    assert selection.fitted_at == 0.0
    assert selection.chosen == "brown"
    # Before 600 s: the same fitted model, updated with the new points.
    second = selection.forecast_series(timed(SERIES[:201]), 3, 0.9, 599.0)
    assert selection.fitted is fitted
    assert selection.fitted_at == 0.0
    assert fitted is not None
    assert fitted.y_.size == 201
    assert not np.allclose(second.mean, first.mean)
    # At 600 s: a new model, fitted now.
    selection.forecast_series(timed(SERIES[:202]), 3, 0.9, 600.0)
    assert selection.fitted is not fitted
    assert selection.fitted_at == 600.0


def test_scheduled_selection_reselects_for_a_longer_horizon() -> None:
    selection = ScheduledSelection("auto", candidates=["naive", "brown"], refresh_seconds=3600.0)
    selection.forecast_series(timed(SERIES[:200]), 3, 0.9, 0.0)
    chosen = selection.selection
    assert chosen is not None
    assert chosen.horizon == 3
    # Same or shorter horizon within the refresh time: the selection is kept.
    selection.forecast_series(timed(SERIES[:201]), 2, 0.9, 60.0)
    assert selection.selection is chosen
    assert selection.fitted_at == 0.0
    # A longer horizon than the backtest measured: select again, now.
    forecast = selection.forecast_series(timed(SERIES[:202]), 5, 0.9, 120.0)
    assert selection.selection is not chosen
    assert selection.selection is not None
    assert selection.selection.horizon == 5
    assert selection.fitted_at == 120.0
    assert selection.chosen in {"naive", "brown"}
    assert_valid(forecast, 5)


def test_scheduled_selection_refuses_bad_settings_and_data() -> None:
    with pytest.raises(ValueError, match="refresh_seconds"):
        ScheduledSelection("brown", refresh_seconds=0.0)
    with pytest.raises(ValueError, match="unknown model 'nope'"):
        ScheduledSelection("nope")
    with pytest.raises(ValueError, match="finite"):
        ScheduledSelection("brown").forecast_series(timed(np.array([np.nan, np.inf])), 2, 0.9, 0.0)


def test_a_fitted_and_updated_arima_keeps_no_kalman_buffers_and_forecasts_as_before() -> None:
    model = Arima().fit(SERIES[:250])
    fitted = model.results_
    assert not fitted.model.ssm._kalman_filters
    assert not fitted.model.ssm._kalman_smoothers
    for window in (SERIES[:250], SERIES[:260]):
        if window.size > model.y_.size:
            model.update(window)
            # The fit's results, its smoother's output with them, are let go.
            assert model.results_ is None
            assert model.filter_ is not None
            assert not model.filter_.kalman._kalman_filters
        # A model that keeps its buffers, filtered with the same parameters, agrees.
        kept = fitted.model.clone(window[-model.max_window :]).filter(model.params_)
        assert kept.model.ssm._kalman_filters
        expected = kept.get_forecast(5).summary_frame(alpha=0.1)
        forecast = model.predict(5, 0.9)
        np.testing.assert_allclose(forecast.mean, np.clip(expected["mean"], 0, None))
        np.testing.assert_allclose(forecast.upper, np.clip(expected["mean_ci_upper"], 0, None))


def test_an_stl_update_that_moves_the_window_on_keeps_its_profile_turned() -> None:
    """As the inner model keeps its parameters: the samples seen before are adjusted as
    before, so the inner model filters only the new ones."""
    y = seasonal_load(400, season=24)
    model = make_model("holt+stl", season_length=24).fit(y[:360])
    assert isinstance(model, Deseasonalized)
    assert model.profile_ is not None
    before, shift = model.profile_.copy(), model.shift_
    inner_seen = model.model_.y_.copy()
    model.update(y[5:365])  # five new samples, five dropped
    assert model.profile_ is not None
    np.testing.assert_allclose(model.profile_, np.roll(before, -5))
    assert model.shift_ == shift
    np.testing.assert_allclose(model.model_.y_[:-5], inner_seen[5:])
    # A window that does not continue the last one has its profile learnt again.
    model.update(y[40:400][::-1].copy())
    assert model.profile_ is not None
    assert not np.allclose(model.profile_, np.roll(before, -5))
