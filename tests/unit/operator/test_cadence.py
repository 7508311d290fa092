"""The rhythm of an object's evaluations: a one-off delay is caught up, a backlog is not."""

from __future__ import annotations

import pytest

from predictive_scaler.operator.cadence import Cadence

pytestmark = pytest.mark.unit

PERIOD = 60.0


def turn(cadence: Cadence, began: float) -> float:
    """Run one turn that began at `began`; return when the next is due."""
    cadence.started(began, waited=max(0.0, began - cadence.due), period=PERIOD)
    cadence.finished(began, PERIOD)
    return cadence.due


def test_turns_on_time_keep_the_rhythm_of_the_first() -> None:
    cadence = Cadence(due=0.0)
    assert turn(cadence, 0.0) == 60.0
    assert turn(cadence, 61.0) == 120.0  # a second late is within the rhythm
    assert turn(cadence, 120.0) == 180.0


def test_a_one_off_delay_is_caught_up() -> None:
    cadence = Cadence(due=0.0)
    turn(cadence, 0.0)
    assert turn(cadence, 80.0) == 120.0  # 20 s late: the next is still due at 120
    assert turn(cadence, 120.0) == 180.0


def test_at_most_half_a_period_is_caught_up() -> None:
    cadence = Cadence(due=0.0)
    turn(cadence, 0.0)
    assert turn(cadence, 110.0) == 140.0  # 50 s late: 30 s caught up, not 50


def test_a_backlog_stretches_the_rhythm_instead_of_asking_for_more_turns() -> None:
    cadence = Cadence(due=0.0)
    turn(cadence, 0.0)
    assert turn(cadence, 80.0) == 120.0  # the first late turn is caught up
    # Late again: the queue is not keeping up, so the next is a period from now.
    assert turn(cadence, 145.0) == 205.0
    assert turn(cadence, 230.0) == 290.0
    # Back on time: the rhythm holds again, and a one-off delay is caught up.
    assert turn(cadence, 290.0) == 350.0
    assert turn(cadence, 370.0) == 410.0


def test_the_first_turn_starts_the_rhythm_however_long_it_queued() -> None:
    cadence = Cadence(due=0.0)
    assert turn(cadence, 100.0) == 160.0


def test_an_early_turn_starts_a_new_rhythm() -> None:
    cadence = Cadence(due=0.0)
    turn(cadence, 0.0)
    assert turn(cadence, 20.0) == 80.0  # a model arrived: evaluated at once


def test_lateness_counts_turns_over_half_a_period_late_in_a_row() -> None:
    cadence = Cadence(due=0.0)
    turn(cadence, 0.0)
    lateness = cadence.started(95.0, waited=30.0, period=PERIOD)
    assert lateness.seconds == 35.0
    assert lateness.queued_seconds == 30.0
    assert lateness.late_in_a_row == 1
    cadence.finished(95.0, PERIOD)
    assert cadence.started(cadence.due + 31.0, waited=31.0, period=PERIOD).late_in_a_row == 2


def test_a_new_model_wakes_the_object_only_when_its_turn_is_over_half_a_period_away() -> None:
    cadence = Cadence(due=0.0)
    assert turn(cadence, 0.0) == 60.0
    assert cadence.takes_wake(now=20.0, period=PERIOD)  # 40 s to wait: worth a turn now
    assert not cadence.takes_wake(now=31.0, period=PERIOD)  # 29 s: the due turn uses it
    assert not cadence.takes_wake(now=70.0, period=PERIOD)  # already due
