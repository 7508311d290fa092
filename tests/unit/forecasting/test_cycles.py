"""Short cycles found in the recent window, and used as its season by ``auto``."""

from __future__ import annotations

import numpy as np
import pytest

from predictive_scaler.forecasting import RefreshRequest, refresh_model
from predictive_scaler.forecasting.cycles import find_cycle

pytestmark = pytest.mark.unit

STEP = 30.0


def cyclic(n: int, period: int, seed: int = 7, amplitude: float = 5.0) -> np.ndarray:
    """A level of 50 with a cycle of ``period`` steps (a short burst each round), and noise."""
    rng = np.random.default_rng(seed)
    burst = np.where(np.arange(n) % period < period // 3, amplitude, 0.0)
    return np.asarray(50.0 + burst + rng.normal(0.0, 1.0, n), dtype=np.float64)


@pytest.mark.parametrize(("period", "step"), [(10, 30.0), (6, 300.0), (12, 300.0), (30, 60.0)])
def test_a_clock_cycle_is_found_in_steps(period: int, step: float) -> None:
    assert find_cycle(cyclic(720, period), step) == period


@pytest.mark.parametrize(
    "values",
    [
        pytest.param(np.random.default_rng(1).normal(50.0, 1.0, 720), id="noise"),
        pytest.param(50.0 + np.cumsum(np.random.default_rng(2).normal(0, 1, 720)), id="walk"),
        pytest.param(np.linspace(10.0, 90.0, 720), id="trend"),
        pytest.param(np.full(720, 7.0), id="flat"),
    ],
)
def test_noise_drift_a_trend_or_a_flat_load_have_no_cycle(values: np.ndarray) -> None:
    assert find_cycle(values, STEP) is None


def test_a_period_off_the_clock_or_too_long_for_the_window_is_not_looked_for() -> None:
    # 7 steps of 30 s is 3.5 min, no clock period; 2 h is 240 steps, not 4 in 720.
    assert find_cycle(cyclic(720, 7), STEP) is None
    assert find_cycle(cyclic(720, 240), STEP) is None
    # Too few samples to tell anything.
    assert find_cycle(cyclic(12, 4), STEP) is None


def test_spikes_and_gaps_do_not_hide_a_cycle() -> None:
    values = cyclic(720, 10)
    values[::97] *= 20.0
    values[200:230] = np.nan
    assert find_cycle(values, STEP) == 10


def request(
    series: np.ndarray, season_length: int | None = None, model: str = "auto"
) -> RefreshRequest:
    times = STEP * np.arange(series.size + 2, dtype=np.float64)
    return RefreshRequest(
        model=model,
        candidates=None,
        season_length=season_length,
        seasonality_seconds=None,
        series=series,
        step_times=times,
        horizon=2,
        now=float(times[series.size]),
    )


def test_auto_selects_with_the_cycle_as_the_windows_season() -> None:
    series = cyclic(720, 10)
    refreshed = refresh_model(request(series))
    assert refreshed.cycle_seconds == 10 * STEP
    selection = refreshed.pathways[0].selection
    assert selection is not None
    assert any(name.endswith("+stl") for name in selection.scores), "seasonal variants scored"
    # It forecasts the next burst, where a model without the cycle could not.
    plain = refresh_model(request(series, model="holt"))
    assert plain.cycle_seconds is None
    fitted = refreshed.pathways[0].fitted.predict(10).mean
    assert np.ptp(fitted) > 2.5 > np.ptp(plain.pathways[0].fitted.predict(10).mean)


def test_a_configured_season_is_used_and_no_cycle_looked_for() -> None:
    # The window has a 10-step cycle, which a search would find (see above).
    refreshed = refresh_model(request(cyclic(720, 10), season_length=24))
    assert refreshed.cycle_seconds is None
