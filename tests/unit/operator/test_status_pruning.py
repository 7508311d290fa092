"""Status is merge-patched: keys an evaluation no longer writes must be sent as null to go."""

from __future__ import annotations

from predictive_scaler.operator.report import without_stale_keys


def test_a_season_that_is_learnt_drops_what_it_was_waiting_for() -> None:
    previous = {
        "decision": "old",
        "forecast": {
            "model": "holt",
            "seasons": {"inUse": False, "waitingFor": "1d", "needed": "2d"},
            "backtestErrors": {"holt": 0.9, "arima": 1.1},
        },
        "overload": {"budget": "1%", "limit": "the quantile is at its highest: ..."},
    }
    current = {
        "decision": "new",
        "forecast": {
            "model": "holt+season",
            "seasons": {"inUse": True},
            "backtestErrors": {"holt+season": 0.7},
        },
        "overload": {"budget": "1%"},
    }
    patch = without_stale_keys(previous, current)
    assert patch["forecast"]["seasons"] == {"inUse": True, "waitingFor": None, "needed": None}
    assert patch["forecast"]["backtestErrors"] == {"holt+season": 0.7, "holt": None, "arima": None}
    assert patch["overload"] == {"budget": "1%", "limit": None}
    assert patch["decision"] == "new"
    # What the evaluation did not write at all (a blocked one) is left as it was.
    assert "forecast" not in without_stale_keys(previous, {"decision": "blocked"})
    # The caller's dict is not changed.
    assert current["overload"] == {"budget": "1%"}
