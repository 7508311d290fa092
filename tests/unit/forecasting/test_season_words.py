"""What the forecaster says of the seasons: how much history there is and how much is needed."""

from __future__ import annotations

import numpy as np

from predictive_scaler.forecasting.known_seasons import (
    SeasonKnowledge,
    season_knowledge,
    season_name,
)
from predictive_scaler.forecasting.seasons import DAY, WEEK, TimedSeries

STEP = 300.0


def _daily(observed_days: float, window_days: float = 15.0) -> TimedSeries:
    size = round(window_days * DAY / STEP) + 1
    seen = round(observed_days * DAY / STEP)
    times = np.arange(size) * STEP
    rng = np.random.default_rng(7)
    values = 50 + 30 * np.sin(2 * np.pi * times / DAY) + rng.normal(0, 2, size)
    values[: size - seen] = np.nan
    return TimedSeries(values, STEP, float(times[-1]))


def test_hours_into_a_cold_start_it_says_how_much_of_two_days_there_is() -> None:
    knowledge, profile = season_knowledge(_daily(5 / 24), None)
    assert knowledge.cold
    assert profile is None
    assert knowledge.summary() == "5 h of the 2 days needed to learn the daily season"


def test_once_two_days_are_there_the_day_is_found_and_the_week_still_awaited() -> None:
    knowledge, profile = season_knowledge(_daily(3), None)
    assert not knowledge.cold
    assert profile is not None
    assert knowledge.seasons == (DAY,)
    assert knowledge.waiting_for == WEEK
    assert "3 days of the 14 days needed to learn the weekly season" in knowledge.summary()


def test_a_week_that_cannot_fit_twice_in_the_window_is_not_looked_for() -> None:
    knowledge, _ = season_knowledge(_daily(10, window_days=10), None)
    assert knowledge.looked_for == (DAY,)
    assert knowledge.waiting_for is None
    assert "weekly" not in knowledge.summary()


def test_a_configured_season_is_awaited_alone() -> None:
    knowledge, profile = season_knowledge(_daily(1), 12 * 3600.0)
    assert knowledge.seasons == (12 * 3600.0,)
    assert profile is not None
    cold, _ = season_knowledge(_daily(0.5), DAY)
    assert cold.cold
    assert cold.summary() == "12 h of the 2 days needed to learn the daily season"


def test_a_load_without_seasons_is_told_so_after_the_window_is_full() -> None:
    rng = np.random.default_rng(3)
    flat = TimedSeries(50 + rng.normal(0, 5, 4321), STEP, 4320 * STEP)
    knowledge, profile = season_knowledge(flat, None)
    assert profile is None
    assert knowledge.waiting_for is None
    assert knowledge.summary() == "no daily or weekly season in 15 days"


def test_what_there_is_rounds_down_and_what_is_needed_rounds_up() -> None:
    # 5.8 of 6.4 minutes read "6 min of the 6 min needed" when both were rounded.
    short = SeasonKnowledge((), 5.8 * 60, 3.2 * 60, 6.4 * 60, in_use=False, cold=True)
    assert short.summary() == "5 min of the 7 min needed to learn the 3.2 min season"


def test_a_configured_season_is_named_to_three_figures() -> None:
    assert [season_name(s) for s in (DAY, WEEK, 192.0, 90.0, 36 * 3600.0, 2 * DAY, 45.0)] == [
        "daily",
        "weekly",
        "3.2 min",
        "1.5 min",
        "36 h",
        "2 days",
        "45 s",
    ]


def test_thirteen_and_a_half_days_of_the_fourteen_needed_do_not_read_fourteen() -> None:
    # Floored to tenths (13.9), then printed whole: "14 days of the 14 days needed".
    almost = SeasonKnowledge((DAY,), 13.96 * DAY, WEEK, 2 * WEEK, in_use=True)
    assert almost.summary() == (
        "daily season in use; 13 days of the 14 days needed to learn the weekly season"
    )
    knowledge, _ = season_knowledge(_daily(13.96), None)
    assert "13 days of the 14 days needed to learn the weekly season" in knowledge.summary()
