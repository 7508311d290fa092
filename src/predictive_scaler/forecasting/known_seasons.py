"""What the forecaster knows of a workload's seasons, and how status says it.

Which seasons are in use, found or configured, and while history is short,
how much there is of how much is needed ("5 h of the 2 days needed to learn
the daily season"): the words of the ForecastReliable condition, its Events
and ``status.forecast.seasons``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from predictive_scaler.forecasting.seasons import (
    CANDIDATE_PERIODS,
    DAY,
    WEEK,
    SeasonalProfile,
    TimedSeries,
    find_seasons,
    history_needed,
    learn_profile,
)


@dataclass(frozen=True)
class SeasonKnowledge:
    """What the forecaster knows of the seasons, for status and the cold-start condition.

    ``seasons`` are the periods in use (found, or configured and learnable);
    ``waiting_for`` is the shortest period still lacking history (configured,
    or a candidate not yet testable), with ``history_seconds`` of the
    ``needed_seconds`` it takes; None when nothing is missing. ``cold`` is
    set while even the shortest season looked for lacks history: nothing
    seasonal can be known yet, the forecast stands on the recent window.
    """

    seasons: tuple[float, ...]
    history_seconds: float
    waiting_for: float | None
    needed_seconds: float
    in_use: bool  # the seasonal profile shapes the forecast (pathways.pathways_to_use)
    cold: bool = False
    looked_for: tuple[float, ...] = CANDIDATE_PERIODS

    def summary(self) -> str:
        """The same in words, for the condition, Events and `kubectl describe`."""
        if self.cold and self.waiting_for is not None:
            return (
                f"{_amount(self.history_seconds, math.floor)} of the "
                f"{_amount(self.needed_seconds, math.ceil)} needed "
                f"to learn the {season_name(self.waiting_for)} season"
            )
        parts: list[str] = []
        if self.seasons:
            names = " and ".join(season_name(s) for s in self.seasons)
            plural = "s" if len(self.seasons) > 1 else ""
            if self.in_use:
                parts.append(f"{names} season{plural} in use")
            else:
                parts.append(f"{names} season{plural} found; the recent window forecasts better")
        else:
            tested = [p for p in self.looked_for if p != self.waiting_for]
            if tested:
                names = " or ".join(season_name(p) for p in tested)
                parts.append(f"no {names} season in {_amount(self.history_seconds)}")
        if self.waiting_for is not None:
            parts.append(
                f"{_amount(self.history_seconds, math.floor)} of the "
                f"{_amount(self.needed_seconds, math.ceil)} needed "
                f"to learn the {season_name(self.waiting_for)} season"
            )
        return "; ".join(parts)


def season_name(period_seconds: float) -> str:
    """daily, weekly, or the period to three figures: a configured 192 s season is named
    "3.2 min", not "3 min", or its "6.4 min needed" would not read as two of it."""
    named = {DAY: "daily", WEEK: "weekly"}.get(period_seconds)
    if named:
        return named
    if period_seconds < 60.0:
        return f"{period_seconds:.3g} s"
    size, unit = _unit(period_seconds)
    return f"{period_seconds / size:.3g} {unit}"


def _unit(seconds: float) -> tuple[float, str]:
    """The unit a person would say an amount of time in: days from two on, then h, then min."""
    if seconds >= 2 * DAY:
        return DAY, "days"
    if seconds >= 3600.0:
        return 3600.0, "h"
    return 60.0, "min"


def _amount(seconds: float, rounding: Callable[[float], float] = round) -> str:
    """5 h, 2 days, 40 min: the unit a person would say.

    ``rounding`` is floor for what there is and ceil for what is needed, so
    "6 min of the 7 min needed" never reads "6 min of the 6 min" while short.
    """
    size, unit = _unit(seconds)
    if size != DAY or seconds >= 10 * DAY:  # whole units, rounded as asked
        return f"{rounding(seconds / size):.0f} {unit}"
    days = rounding(seconds / DAY * 10) / 10
    return f"{days:.0f} days" if days == round(days) else f"{days:.1f} days"


def season_knowledge(
    long: TimedSeries,
    configured: float | None,
    profile_until: float | None = None,
    held: tuple[float, ...] = (),
) -> tuple[SeasonKnowledge, SeasonalProfile | None]:
    """The seasons of ``long`` (or the configured one) and, when learnable, their profile.

    Candidate seasons that two of could never fit in the window ``long``
    spans are not looked for (a week in a 10-day window). Seasons are found
    on all of ``long``; with ``profile_until``, their profile is learnt only
    from the samples taken by then. ``held``: the seasons found last time
    (:data:`~.seasons.HELD_SHARE`).
    """
    have = long.observed_seconds
    window = long.values.size * long.step_seconds
    if configured is not None:
        wanted: tuple[float, ...] = (configured,)
    else:
        wanted = tuple(p for p in CANDIDATE_PERIODS if history_needed(p) <= window)
    found: tuple[float, ...]
    if not wanted:
        return SeasonKnowledge((), have, None, 0.0, False, looked_for=()), None
    if configured is not None:
        found = (configured,) if have >= history_needed(configured) else ()
    else:
        found = tuple(f.period_seconds for f in find_seasons(long, wanted, held) if f.present)
    lacking = [period for period in sorted(wanted) if have < history_needed(period)]
    # Only the shortest missing season makes a cold start; a missing week
    # once the day is known is reported as waiting too, but the forecast
    # already uses the day.
    waiting = lacking[0] if lacking else None
    learnt_from = long if profile_until is None else long.until(profile_until)
    profile = learn_profile(learnt_from, found) if found else None
    knowledge = SeasonKnowledge(
        found,
        have,
        waiting,
        history_needed(waiting) if waiting else 0.0,
        False,
        cold=waiting is not None and waiting == min(wanted),
        looked_for=tuple(sorted(wanted)),
    )
    return knowledge, profile
