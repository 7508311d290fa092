"""Replay load traces through scaling policies: the figures behind every scaling claim.

Pure: implements design.md section 5 (capacity per replica, start-up delay,
causal decisions, overload and cost accounting), the reactive ``hpa``
baseline, the ``oracle``, and the predictive policy through
:func:`predictive_scaler.scaling.decide` itself.
"""

from predictive_scaler.simulation.backtest import (
    BacktestResult,
    BacktestSettings,
    forecast_table,
    run_backtest,
)
from predictive_scaler.simulation.matched import Matched, compare
from predictive_scaler.simulation.replay import Outcome, ReplayConfig, ReplayResult, replay

__all__ = [
    "BacktestResult",
    "BacktestSettings",
    "Matched",
    "Outcome",
    "ReplayConfig",
    "ReplayResult",
    "compare",
    "forecast_table",
    "replay",
    "run_backtest",
]
