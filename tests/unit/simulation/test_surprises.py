"""Overloads beyond the threshold's ceiling, on a forecast table written by hand."""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pytest

from predictive_scaler.scaling.budget import HIGHEST
from predictive_scaler.simulation import ReplayConfig
from predictive_scaler.simulation.forecasts import ForecastTable
from predictive_scaler.simulation.surprises import beyond_ceiling

pytestmark = pytest.mark.unit

LEVEL = 0.9
# Forecast 10 for every step, one spread of 1: the ceiling provisions 10 + HIGHEST.
MEAN, SPREAD = 10.0, 1.0
CEILING = MEAN + HIGHEST * SPREAD
# Capacity 10 a replica, start-up 1, scored from step 1: the ceiling's 15 is two replicas, 20.
CONFIG = ReplayConfig(capacity=10.0, startup_steps=1, step_seconds=60.0, start=1)
LOAD = np.array([5.0, 9.0, 19.0, 21.0, 25.0, 8.0])


def table(rows: int, *, missing: tuple[int, ...] = ()) -> ForecastTable:
    """Forecasts made at steps 0..rows-1 for two steps each (start-up 1 plus one)."""
    half = NormalDist().inv_cdf((1.0 + LEVEL) / 2.0) * SPREAD
    mean = np.full((rows, 2), MEAN)
    mean[list(missing)] = np.nan
    return ForecastTable(0, 60.0, LEVEL, mean, mean - half, mean + half, ("m",) * rows)


def test_counts_only_overloads_the_ceiling_would_not_have_served() -> None:
    # One replica ready throughout. Overloaded: steps 2 (19), 3 (21) and 4 (25);
    # within two replicas: step 2 only.
    ready = np.ones(LOAD.size - 1, dtype=np.int64)
    assert CEILING <= 20.0
    assert beyond_ceiling(LOAD, table(LOAD.size), ready, CONFIG) == 2


def test_a_step_without_its_sizing_forecast_is_not_counted() -> None:
    ready = np.ones(LOAD.size - 1, dtype=np.int64)
    # Step 4 was sized by the decision at step 3, which had no forecast.
    assert beyond_ceiling(LOAD, table(LOAD.size, missing=(3,)), ready, CONFIG) == 1


def test_served_steps_are_never_counted() -> None:
    ready = np.full(LOAD.size - 1, 3, dtype=np.int64)
    assert beyond_ceiling(LOAD, table(LOAD.size), ready, CONFIG) == 0
