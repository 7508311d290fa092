"""Polling with a deadline: the read a wait returns is the one it accepted."""

from __future__ import annotations

import itertools

import pytest

from predictive_scaler_dev.localcluster.waiting import read_until, wait_until


def test_the_accepted_read_is_returned_not_a_later_one() -> None:
    reads = itertools.count(1)
    assert read_until(lambda: next(reads), lambda n: n >= 3, timeout=60, what="three") == 3
    assert next(reads) == 4  # nothing was read after the accepted one


def test_at_the_deadline_the_error_names_what_and_shows_the_last_read() -> None:
    reads = itertools.count(1)
    with pytest.raises(TimeoutError, match=r"^never did not happen within 0 s \(last read: \d+\)$"):
        read_until(lambda: next(reads), lambda n: n < 0, timeout=0, what="never", interval=0)


def test_wait_until_stops_at_the_first_true() -> None:
    answers = iter([False, False, True, False])
    wait_until(lambda: next(answers), timeout=60, what="a True", interval=0)
    assert next(answers) is False
