"""Overloads no overload budget could have bought off: load beyond the threshold's ceiling.

The budget steers how many forecast spreads above the forecast the policy
provisions, up to :data:`~predictive_scaler.scaling.budget.HIGHEST`. An
overloaded step whose load lay above even that ceiling's provisioning, in
whole replicas, came as a surprise to the forecast: a steeper budget would
not have served it, only standing headroom (the HPA's target) or a forecast
that saw it coming. Counting them says how much of a policy's overload is
the budget spent and how much is load the forecast could not see.
"""

from __future__ import annotations

import numpy as np

from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.scaling.budget import HIGHEST, provisioned
from predictive_scaler.simulation.forecasts import ForecastTable
from predictive_scaler.simulation.replay import ReplayConfig, overloaded


def beyond_ceiling(
    load: FloatArray, table: ForecastTable, ready: np.ndarray, config: ReplayConfig
) -> int:
    """Overloaded steps (``ready`` from ``config.start`` on) beyond the ceiling's provisioning.

    Pods added at step ``d`` serve from ``d + startup``, so the decision that
    could have served step ``t`` was made at ``t - startup``, sizing for the
    last step of its horizon (``scaling.decide``). A step whose forecast that
    decision did not have is not counted.
    """
    horizon = config.startup_steps + 1
    scored = load[config.start : config.start + ready.size]
    count = 0
    for index in np.flatnonzero(overloaded(scored, ready, config.capacity)):
        t = config.start + int(index)
        try:
            forecast = table.at(t - config.startup_steps, horizon, table.level)
        except ValueError:
            continue
        ceiling = provisioned(forecast, HIGHEST)[-1:]
        replicas = np.array([config.peak_need(ceiling, 1.0)])
        count += bool(overloaded(load[t : t + 1], replicas, config.capacity)[0])
    return count
