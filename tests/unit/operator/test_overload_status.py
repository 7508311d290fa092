"""status.overload: the budget, what was realised, and why a budget cannot be kept."""

from __future__ import annotations

import pytest

from predictive_scaler.operator.report import overload_status
from predictive_scaler.scaling.budget import HIGHEST, HourCount, OverloadTracker

pytestmark = pytest.mark.unit


def tracker(samples: int, overloaded: int, beyond: int, threshold: float) -> OverloadTracker:
    return OverloadTracker(threshold, 3540.0, (HourCount(0.0, samples, overloaded, beyond),))


def test_a_fresh_tracker_shows_the_budget_and_its_starting_quantile() -> None:
    report = overload_status(0.01, OverloadTracker())
    assert report == {"budget": "1%", "quantile": 0.99, "samples": 0, "summary": "- of 1%"}


def test_the_counts_of_the_window_are_reported() -> None:
    report = overload_status(0.01, tracker(60, 3, 1, 2.0))
    assert report["realised"] == "5%"
    assert (report["overloaded"], report["beyondCeiling"]) == (3, 1)
    assert report["summary"] == "5% of 1%"
    assert report["window"] == "59m"


def test_overloads_beyond_the_ceiling_above_the_budget_say_no_quantile_keeps_it() -> None:
    report = overload_status(0.01, tracker(100, 5, 2, HIGHEST))
    assert report["limit"].startswith("2% of the samples overloaded beyond what the highest")
    assert "no quantile keeps it" in report["limit"]


def test_a_pinned_quantile_without_them_says_more_headroom_cannot_keep_up() -> None:
    report = overload_status(0.01, tracker(100, 5, 1, HIGHEST))
    assert report["limit"].startswith("the quantile is at its highest")
    assert "limit" not in overload_status(0.01, tracker(100, 5, 1, 2.0))
