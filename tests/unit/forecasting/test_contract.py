"""The contract every registered model keeps, run over the whole registry."""

from __future__ import annotations

import math

import numpy as np
import pytest

from predictive_scaler.forecasting import (
    MODEL_NAMES,
    Auto,
    Forecast,
    ForecastModel,
    NotFittedError,
    make_model,
)
from predictive_scaler.forecasting.numerics import MAGNITUDES_FITTED_AS_THEY_ARE, load_unit
from tests.conftest import seasonal_load

SERIES = seasonal_load(300)
OTHER_SERIES = seasonal_load(260, seed=11) * 0.5 + 40.0
REQUIRED = {
    "naive",
    "seasonal_naive",
    "brown",
    "holt",
    "gm11",
    "grey_es",
    "arima",
    "arima_rbf",
    "gbdt",
    "auto",
}


def build(name: str) -> ForecastModel:
    return make_model(name, season_length=24)


def test_registry_lists_every_required_model() -> None:
    assert set(MODEL_NAMES) >= REQUIRED


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_fit_returns_the_model_and_predict_a_valid_forecast(name: str) -> None:
    model = build(name)
    assert model.fit(SERIES) is model
    assert not model.is_degraded, model.fallback_reason_
    forecast = model.predict(7, level=0.9)
    assert isinstance(forecast, Forecast)
    assert forecast.model == name
    assert forecast.level == 0.9
    for values in (forecast.mean, forecast.lower, forecast.upper):
        assert values.shape == (7,)
        assert np.isfinite(values).all()
        assert (values >= 0).all()
    assert (forecast.lower <= forecast.mean).all()
    assert (forecast.mean <= forecast.upper).all()
    # A real interval, not a point: the models all see noisy data here.
    assert (forecast.upper - forecast.lower).max() > 0


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_forecast_tracks_the_series(name: str) -> None:
    """Nothing absurd: one step ahead stays within the range the series has shown."""
    forecast = build(name).fit(SERIES).predict(1)
    assert SERIES.min() * 0.5 < forecast.mean[0] < SERIES.max() * 1.5


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_wider_level_gives_a_wider_interval(name: str) -> None:
    model = build(name).fit(SERIES)
    narrow, wide = model.predict(5, level=0.5), model.predict(5, level=0.95)
    assert np.all(wide.upper >= narrow.upper - 1e-9)
    assert np.all(wide.lower <= narrow.lower + 1e-9)


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_same_data_same_forecast(name: str) -> None:
    first = build(name).fit(SERIES).predict(5)
    second = build(name).fit(SERIES).predict(5)
    np.testing.assert_array_equal(first.mean, second.mean)
    np.testing.assert_array_equal(first.upper, second.upper)


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_refit_forgets_the_old_data(name: str) -> None:
    refitted = build(name).fit(SERIES).fit(OTHER_SERIES).predict(5)
    fresh = build(name).fit(OTHER_SERIES).predict(5)
    np.testing.assert_allclose(refitted.mean, fresh.mean, rtol=1e-9)
    np.testing.assert_allclose(refitted.upper, fresh.upper, rtol=1e-9)


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_fitted_attributes_end_with_underscore(name: str) -> None:
    model = build(name)
    before = set(vars(model))
    assert before <= set(model.get_params()) | {"name"}
    model.fit(SERIES)
    added = set(vars(model)) - before
    assert added, "fit() should set fitted attributes"
    assert all(attribute.endswith("_") for attribute in added), sorted(added)


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_clone_keeps_hyper_parameters_and_drops_fit(name: str) -> None:
    model = build(name).fit(SERIES)
    clone = model.clone()
    assert type(clone) is type(model)
    assert clone.get_params() == model.get_params()
    with pytest.raises(NotFittedError):
        clone.predict(1)


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_predict_before_fit_is_an_error(name: str) -> None:
    with pytest.raises(NotFittedError, match="fit"):
        build(name).predict(3)


@pytest.mark.parametrize("bad_horizon", [0, -1, 2.5, True])
def test_horizon_must_be_a_positive_integer(bad_horizon: object) -> None:
    model = make_model("naive").fit(SERIES)
    with pytest.raises(ValueError, match="horizon"):
        model.predict(bad_horizon)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad_level", [0.0, 1.0, -0.2, 80.0])
def test_level_must_lie_strictly_between_zero_and_one(bad_level: float) -> None:
    model = make_model("naive").fit(SERIES)
    with pytest.raises(ValueError, match="level"):
        model.predict(3, level=bad_level)


def test_unknown_model_name_lists_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown model 'prophet'.*holt"):
        make_model("prophet")


def test_unknown_parameter_names_the_model() -> None:
    with pytest.raises(ValueError, match="bad parameters for model 'brown'"):
        make_model("brown", beta=0.3)


@pytest.mark.parametrize(
    ("name", "params", "message"),
    [
        ("brown", {"alpha": 1.0}, "alpha"),
        ("gm11", {"window": 3}, "window"),
        ("ets", {"config": ("mul", False)}, "config"),
        ("arima", {"criterion": "hqic?"}, "criterion"),
        ("seasonal_naive", {"season_length": 0}, "season_length"),
        ("auto", {"candidates": ["naive", "nope"]}, "unknown model 'nope'"),
    ],
)
def test_bad_hyper_parameters_are_refused_at_construction(
    name: str, params: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        make_model(name, **params)


def test_forecast_is_immutable_and_checks_its_invariants() -> None:
    forecast = make_model("naive").fit(SERIES).predict(3)
    with pytest.raises(ValueError, match="read-only"):
        forecast.mean[0] = 1.0
    with pytest.raises(ValueError, match="lower <= mean <= upper"):
        Forecast("x", np.array([1.0]), np.array([2.0]), np.array([3.0]), 0.8)
    with pytest.raises(ValueError, match="finite"):
        Forecast("x", np.array([np.nan]), np.array([0.0]), np.array([1.0]), 0.8)


# Far outside the magnitudes models fit as they are (numerics.MAGNITUDES_FITTED_AS_THEY_ARE),
# on both sides; SERIES is about 2^6, so none reaches the hygiene's MAX_LOAD.
FAR_UNITS = (2.0**-40, 2.0**-30, 2.0**30)


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_a_load_in_a_tiny_or_huge_unit_gets_the_same_forecast_in_that_unit(name: str) -> None:
    """Bytes or petabytes, the load is the same: so is its forecast, to the last bit.

    Before, statsmodels fitted the load where it was: at 2^-18 an ARIMA
    forecast left for 10^17 times the load, at 2^-30 its bound was 10^5 times
    too wide, and at 10^-6 its covariance step never returned.
    """
    forecasts = [build(name).fit(SERIES * unit).predict(5, level=0.9) for unit in FAR_UNITS]
    for unit, forecast in zip(FAR_UNITS[1:], forecasts[1:], strict=True):
        for values, first in (
            (forecast.mean, forecasts[0].mean),
            (forecast.lower, forecasts[0].lower),
            (forecast.upper, forecasts[0].upper),
        ):
            np.testing.assert_allclose(values / unit, first / FAR_UNITS[0], rtol=1e-12)


@pytest.mark.parametrize("name", MODEL_NAMES)
@pytest.mark.parametrize("unit", [1e-6, *FAR_UNITS], ids=["1e-6", "2^-40", "2^-30", "2^30"])
def test_a_load_in_a_tiny_or_huge_unit_is_forecast_like_the_same_load_in_a_usual_one(
    name: str, unit: float
) -> None:
    usual = build(name).fit(SERIES).predict(5, level=0.9)
    model = build(name).fit(SERIES * unit)
    assert not model.is_degraded, model.fallback_reason_
    scaled = model.predict(5, level=0.9)
    mean = scaled.mean / unit
    assert (SERIES.min() * 0.5 < mean).all()
    assert (mean < SERIES.max() * 1.5).all()
    # The same band, up to what the libraries' tolerances make of another magnitude.
    width = (scaled.upper - scaled.lower) / unit
    usual_width = usual.upper - usual.lower
    assert (width < 3.0 * usual_width).all()
    assert (width > usual_width / 3.0).all()


def test_a_load_within_the_usual_magnitudes_is_fitted_in_its_own_unit() -> None:
    """Dividing by 1 changes nothing: what the benchmarks measured is what runs."""
    low, high = MAGNITUDES_FITTED_AS_THEY_ARE
    for magnitude in (0.0, low, 1.0, 300.0, 7e6, high):
        assert load_unit(np.full(10, magnitude)) == 1.0
    for magnitude in (low / 2.0, 1e-6, 3e-12, high * 2.0, 1e11):
        unit = load_unit(np.full(10, magnitude))
        assert math.log2(unit).is_integer()
        assert 1.0 <= magnitude / unit < 2.0


def test_auto_given_back_its_own_selection_on_a_tiny_load_gives_the_same_forecast() -> None:
    """A selection is a value in the load's unit, whichever unit auto fitted in."""
    tiny = SERIES * 2.0**-30
    first = Auto().fit(tiny)
    again = Auto(selection=first.selection_).fit(tiny)
    ahead, repeated = first.predict(5, level=0.9), again.predict(5, level=0.9)
    np.testing.assert_allclose(repeated.lower, ahead.lower, rtol=1e-9)
    np.testing.assert_allclose(repeated.upper, ahead.upper, rtol=1e-9)
