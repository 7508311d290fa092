"""Settle (a move's nodes and workload) and cool-down (the pods a move created)."""

from __future__ import annotations

import pytest

from predictive_scaler.rebalancing.cooldown import PodBirth, Streak, Timings, cooling
from predictive_scaler.refs import PodRef, WorkloadRef

pytestmark = pytest.mark.unit

TIMINGS = Timings(settle=60.0, cooldown=600.0)
WEB = WorkloadRef("shop", "Deployment", "web")
OTHER = WorkloadRef("shop", "Deployment", "other")


def pod(name: str) -> PodRef:
    return PodRef("shop", name)


def test_a_moved_node_waits_the_settle_and_no_longer() -> None:
    moves = {"hot": 1000.0}
    assert cooling(moves, {}, [], 1059.0, TIMINGS).nodes == {"hot"}
    assert not cooling(moves, {}, [], 1060.0, TIMINGS).nodes


def test_a_moved_workload_waits_the_settle_from_its_last_move() -> None:
    streaks = {WEB: Streak(since=500.0, last=1000.0)}
    assert cooling({}, streaks, [], 1059.0, TIMINGS).workloads == {WEB}
    assert not cooling({}, streaks, [], 1061.0, TIMINGS).workloads


def test_the_pods_born_since_the_streak_began_wait_the_cooldown() -> None:
    streaks = {WEB: Streak(since=500.0, last=1000.0)}
    pods = [
        PodBirth(pod("web-old"), WEB, created=100.0),
        PodBirth(pod("web-first-replacement"), WEB, created=505.0),
        PodBirth(pod("web-second-replacement"), WEB, created=1002.0),
        PodBirth(pod("other-new"), OTHER, created=1002.0),
    ]
    held = cooling({}, streaks, pods, 1500.0, TIMINGS).pods
    assert held == {pod("web-first-replacement"), pod("web-second-replacement")}
    # A cool-down after the last move, the replacements are free again.
    assert not cooling({}, streaks, pods, 1600.0, TIMINGS).pods


def test_a_replacement_stamped_by_a_clock_behind_the_operators_counts_as_one() -> None:
    streaks = {WEB: Streak(since=1000.0, last=1000.0)}
    pods = [
        PodBirth(pod("web-a"), WEB, created=959.0),  # within a settle before the streak
        PodBirth(pod("web-b"), WEB, created=939.0),  # older than that: an original
    ]
    assert cooling({}, streaks, pods, 1100.0, TIMINGS).pods == {pod("web-a")}


def test_a_streak_goes_on_within_the_cooldown_and_starts_again_after_it() -> None:
    streak = Streak(since=1000.0, last=1000.0)
    assert streak.extended(1500.0, 600.0) == Streak(1000.0, 1500.0)
    assert streak.extended(1600.0, 600.0) == Streak(1600.0, 1600.0)


@pytest.mark.parametrize(
    ("text", "streak"),
    [
        ("1000/1500", Streak(1000.0, 1500.0)),
        ("1500", Streak(1500.0, 1500.0)),  # the stamp of an older operator: one move
        ("1000.7/1500.2", Streak(1000.7, 1500.2)),
        ("", None),
        (None, None),
        ("yesterday", None),
        ("1000/later", None),
    ],
)
def test_a_stamp_reads_back_or_is_ignored(text: str | None, streak: Streak | None) -> None:
    assert Streak.decode(text) == streak


def test_a_stamp_round_trips_in_whole_seconds() -> None:
    assert Streak.decode(Streak(1000.4, 1500.6).encode()) == Streak(1000.0, 1501.0)
