"""How replays become the scaling report's rows, and the verdicts against issue 17's targets."""

from __future__ import annotations

import pytest

from benchmarks.scaling_replay import Replayed, Row, Source, combine
from benchmarks.scaling_rows import KEPT_BUDGETS, matched_row, out_of_the_box_row, sizing_row
from predictive_scaler.simulation import Outcome
from predictive_scaler.simulation.sizing import SizingTally


def outcome(overload: float, cost: float) -> Outcome:
    return Outcome(overload_minutes=overload, replica_minutes=cost, scaling_actions=1, unserved=0.0)


def replayed(
    predictive: Outcome,
    *,
    hpa: Outcome | None = None,
    sweep: tuple[Outcome, ...] | None = None,
    minutes: float = 1000.0,
    sizing: SizingTally | None = None,
    beyond: tuple[float, ...] | None = None,
) -> Replayed:
    policies = {
        "hpa": hpa or outcome(10.0, 100.0),
        "predictive": predictive,
        "oracle_at_full_utilisation": outcome(0.0, 50.0),
    }
    budgets = (*KEPT_BUDGETS, 0.2)
    points = sweep or tuple(outcome(b * minutes, 100.0 - 100.0 * b) for b in budgets)
    return Replayed(
        policies,
        points,
        budgets,
        minutes,
        beyond_ceiling_minutes=2.0,
        sizing=sizing or SizingTally(),
        sweep_beyond_ceiling_minutes=beyond or (0.0,) * len(points),
    )


def row(
    auto: Replayed, clairvoyant: Replayed | None = None, hindsight: Replayed | None = None
) -> Row:
    """A trace's row; a reference not given saved nothing."""
    nothing = replayed(outcome(0, 100))
    sources = {
        Source.AUTO: auto,
        Source.CLAIRVOYANT: clairvoyant or nothing,
        Source.HINDSIGHT: hindsight or nothing,
    }
    return Row("t", 60.0, 2, sources, {})


@pytest.mark.parametrize(
    ("overload", "cost", "verdict"),
    [
        (10.0, 85.0, "15.0% (met)"),
        (10.0, 86.0, "14.0% (**not met**)"),
        # Cheap enough, but overloaded more than the HPA.
        (11.0, 80.0, "20.0% (**not met**)"),
    ],
)
def test_out_of_the_box_needs_both_the_saving_and_no_more_overload(
    overload: float, cost: float, verdict: str
) -> None:
    cells = out_of_the_box_row(row(replayed(outcome(overload, cost))))
    assert cells[:2] == ["t", "2 steps of 60 s"]
    assert cells[7] == verdict


def test_out_of_the_box_row_reports_the_saving_captured_and_the_cost_over_the_limit() -> None:
    cells = out_of_the_box_row(
        row(
            replayed(outcome(10.0, 85.0)),
            clairvoyant=replayed(outcome(9.0, 80.0)),
            hindsight=replayed(outcome(11.0, 83.0)),
        )
    )
    # (hpa - predictive) / (hpa - oracle at 100 %) = 15 / 50.
    assert cells[10] == "30%"
    assert (cells[8], cells[9]) == ("1.70", "2.00")
    assert cells[5] == "2"
    # Each reference against the same HPA: the hindsight's, then the clairvoyant's.
    assert cells[11:] == ["17.0% (11 overload min)", "20.0% (9 overload min)"]


def test_a_budget_is_kept_within_the_factor_and_flagged_beyond_it() -> None:
    minutes = 1000.0
    realised = (0.004, 0.016, 0.035)  # 0.8x, 1.6x and 1.75x of 0.5 %, 1 % and 2 %
    points = (
        *(outcome(share * minutes, 90.0) for share in realised),
        outcome(200.0, 60.0),
    )
    # Beyond the ceiling: 1, 8 and 0 of those minutes.
    beyond = (1.0, 8.0, 0.0, 50.0)
    cells = matched_row(row(replayed(outcome(10, 90), sweep=points, beyond=beyond)))
    assert cells[4:7] == [
        "0.80x (0.20x)",
        "1.60x (0.80x) (**not met**)",
        "1.75x (0.00x) (**not met**)",
    ]


def test_a_fleet_sums_every_policy_sweep_point_and_minute() -> None:
    first = replayed(outcome(1.0, 10.0), minutes=100.0)
    second = replayed(outcome(2.0, 30.0), minutes=300.0)
    fleet = combine([first, second])
    assert fleet.policies["predictive"].replica_minutes == 40.0
    assert fleet.policies["predictive"].overload_minutes == 3.0
    assert fleet.policies["hpa"].replica_minutes == 200.0
    assert fleet.scored_minutes == 400.0
    assert fleet.beyond_ceiling_minutes == 4.0
    assert fleet.budget_sweep[0].overload_minutes == pytest.approx(0.005 * 400.0)


def test_a_fleets_overload_beyond_the_ceiling_is_summed_per_sweep_point() -> None:
    first = replayed(outcome(1.0, 10.0), beyond=(1.0, 2.0, 3.0, 4.0))
    second = replayed(outcome(1.0, 10.0), beyond=(10.0, 20.0, 30.0, 40.0))
    assert combine([first, second]).sweep_beyond_ceiling_minutes == (11.0, 22.0, 33.0, 44.0)


def test_where_the_replicas_go_reads_per_decision_and_per_scored_minute() -> None:
    # Two decisions: forecast 4 and 6 replicas, provisioned 5.5 and 7.5, whole 6 and 8,
    # asked 7 and 9; the replay held 90 replica-minutes over 10 scored minutes.
    sizing = SizingTally(2, 10.0, 13.0, 14.0, 16.0)
    cells = sizing_row(
        row(
            replayed(outcome(1.0, 90.0), minutes=10.0, sizing=sizing),
            clairvoyant=replayed(outcome(1.0, 80.0), minutes=10.0),
        )
    )
    assert cells[2:9] == ["5.00", "6.50", "7.00", "8.00", "9.00", "10.00", "5.00"]
    # A replay with no decision that forecast says so instead of dividing by zero.
    assert cells[9] == "n/a / n/a / 8.00"


def test_a_fleets_sizing_is_the_sum_of_its_workloads() -> None:
    first = replayed(outcome(1.0, 10.0), sizing=SizingTally(1, 2.0, 3.0, 3.0, 4.0))
    second = replayed(outcome(1.0, 10.0), sizing=SizingTally(3, 6.0, 9.0, 12.0, 12.0))
    assert combine([first, second]).sizing.means() == (2.0, 3.0, 3.75, 4.0)


def test_matched_reads_each_reference_on_its_own_frontier() -> None:
    # The hpa overloads 10 of 1,000 minutes: at a 1 % share the sweeps below cost 100 - 100 x
    # the share for auto, 80 for the hindsight's and 60 for the clairvoyant's.
    budgets = (*KEPT_BUDGETS, 0.2)

    def frontier(cost_at_hpa: float) -> tuple[Outcome, ...]:
        return tuple(outcome(b * 1000.0, cost_at_hpa + (0.01 - b) * 100.0) for b in budgets)

    cells = matched_row(
        row(
            replayed(outcome(10, 90)),
            hindsight=replayed(outcome(10, 80), sweep=frontier(80.0)),
            clairvoyant=replayed(outcome(10, 60), sweep=frontier(60.0)),
        )
    )
    assert cells[2].startswith("1% fewer")
    assert cells[7:] == ["20% fewer", "40% fewer"]
