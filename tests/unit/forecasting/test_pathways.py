"""auto's two pathways (the window, and the window minus the seasons): who takes part, the mean."""

from __future__ import annotations

import math

import numpy as np
import pytest

from predictive_scaler.forecasting import ScheduledSelection, pathways
from predictive_scaler.forecasting.auto import ModelSelection, RankedModel
from predictive_scaler.forecasting.calibration import conformal_offsets
from predictive_scaler.forecasting.models.baseline import Naive
from predictive_scaler.forecasting.pathways import COMBINE_WITHIN, combined_errors, pathways_to_use
from predictive_scaler.forecasting.seasons import DAY, TimedSeries

MINUTE, LONG_STEP = 60.0, 300.0


def scored(score: float | None) -> ModelSelection:
    """A selection whose best candidate scored ``score`` (None: nothing ranked)."""
    ranking = () if score is None else (RankedModel("holt", score, np.zeros((16, 5)), Naive()),)
    return ModelSelection(ranking, (), 5, 16)


@pytest.mark.parametrize(
    ("plain", "seasonal", "expected"),
    [
        (1.0, 1.0, (True, True)),
        (1.0, COMBINE_WITHIN, (True, True)),
        (COMBINE_WITHIN, 1.0, (True, True)),
        (1.0, 1.01 * COMBINE_WITHIN, (True, False)),
        (1.01 * COMBINE_WITHIN, 1.0, (False, True)),
        (1.0, None, (True, False)),
        (None, 1.0, (False, True)),
        (None, None, (False, True)),
    ],
)
def test_both_pathways_take_part_unless_one_backtests_far_worse(
    plain: float | None, seasonal: float | None, expected: tuple[bool, bool]
) -> None:
    assert pathways_to_use(scored(plain), scored(seasonal)) == expected


def test_a_fixed_model_uses_the_season_found() -> None:
    assert pathways_to_use(None, None) == (False, True)


def daily(times: np.ndarray, seed: int) -> np.ndarray:
    """A daily cycle under a random walk: the plain and the seasonal pathway both have a case."""
    rng = np.random.default_rng(seed)
    walk = np.cumsum(rng.normal(0, 3, times.size))
    return np.asarray(
        200 + 60 * np.sin(2 * np.pi * times / DAY) + walk + rng.normal(0, 4, times.size),
        dtype=float,
    )


def test_auto_forecasts_the_mean_of_both_pathways_with_the_mean_s_own_band(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pathways, "COMBINE_WITHIN", math.inf)
    end = 14 * DAY + 0.3 * DAY
    long_times = end - LONG_STEP * np.arange(int(14 * DAY / LONG_STEP), -1, -1)
    recent_times = end - MINUTE * np.arange(359, -1, -1)
    long = TimedSeries(daily(long_times, 1), LONG_STEP, end)
    recent = TimedSeries(daily(recent_times, 2), MINUTE, end)
    forecaster = ScheduledSelection("auto", candidates=["naive", "holt", "brown"])
    forecast = forecaster.forecast_series(recent, 5, 0.9, end, long=long)

    plain, seasonal = forecaster.pathways
    assert (plain.seasonal, seasonal.seasonal) == (False, True)
    assert forecaster.seasons is not None
    assert forecaster.seasons.in_use
    assert forecaster.chosen == f"mean({plain.chosen('auto')}, {seasonal.chosen('auto')})"
    assert forecaster.chosen in forecaster.backtest_errors
    assert any(name.endswith("+season") for name in forecaster.backtest_errors)
    assert any(not name.endswith("+season") for name in forecaster.backtest_errors)

    future = np.asarray(end + MINUTE * np.arange(1, 6), dtype=np.float64)
    means = [
        way.fitted.predict(5, 0.9).mean + way.seasonal_part(future) for way in (plain, seasonal)
    ]
    np.testing.assert_allclose(forecast.mean, np.clip(np.mean(means, axis=0), 0, None))
    errors = combined_errors(forecaster.pathways)
    assert errors is not None
    _, high = conformal_offsets(errors, 5, 0.9)
    np.testing.assert_allclose(forecast.upper, forecast.mean + high)
