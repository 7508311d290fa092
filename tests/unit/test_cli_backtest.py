"""``predictive-scaler backtest`` as a user runs it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from predictive_scaler.cli import main
from predictive_scaler.simulation.backtest import MIN_HISTORY_STEPS

OUTCOME_KEYS = {"overload_minutes", "replica_minutes", "scaling_actions", "unserved", "elasticity"}
ELASTICITY_KEYS = {
    "under_accuracy",
    "over_accuracy",
    "under_timeshare",
    "over_timeshare",
    "instability",
}


def backtest_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    assert main(["backtest", *args, "--json"]) == 0
    report: dict[str, object] = json.loads(capsys.readouterr().out)
    return report


def write_trace(path: Path, values: np.ndarray, step: int = 60) -> Path:
    lines = ["# a hand-made trace: comments first, then the header", "t_seconds,load"]
    lines += [f"{i * step},{value:.3f}" for i, value in enumerate(values)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_json_has_every_policy_and_the_matched_comparison(
    capsys: pytest.CaptureFixture[str],
) -> None:
    report = backtest_json(capsys, "--steps", "600", "--model", "brown", "--startup", "2")
    # Without --overload-budget, the CRD's default budget with the derived capacity.
    budget = report["overload_budget"]
    assert isinstance(budget, dict)
    assert budget["budget"] == 0.01
    policies = report["policies"]
    assert isinstance(policies, dict)
    assert set(policies) == {"predictive", "hpa", "oracle"}
    for outcome in policies.values():
        assert set(outcome) == OUTCOME_KEYS
        assert outcome["replica_minutes"] > 0
        assert set(outcome["elasticity"]) == ELASTICITY_KEYS
    assert policies["oracle"]["overload_minutes"] == 0
    # The oracle is never short of replicas; the HPA, a step late, is.
    assert policies["oracle"]["elasticity"]["under_timeshare"] == 0.0
    assert policies["hpa"]["elasticity"]["under_timeshare"] > 0.0
    matched = report["matched"]
    assert isinstance(matched, dict)
    assert {"overload_reduction_at_hpa_cost", "cost_reduction_at_hpa_overload"} <= set(matched)
    assert report["scored_steps"] == 600 - 360  # 6 h of one-minute history comes first
    assert report["chosen_models"] == {"brown": 240}
    # What the same policy did on forecasts no one can run, as the policies are reported.
    references = report["references"]
    assert isinstance(references, dict)
    assert set(references) == {"hindsight", "clairvoyant"}
    for outcome in references.values():
        assert set(outcome) == OUTCOME_KEYS
        assert outcome["replica_minutes"] > 0


def test_an_overload_budget_is_kept_and_reported(capsys: pytest.CaptureFixture[str]) -> None:
    report = backtest_json(capsys, "--steps", "1800", "--model", "brown", "--overload-budget", "5%")
    budget = report["overload_budget"]
    assert isinstance(budget, dict)
    assert budget["budget"] == 0.05
    assert not budget["matched_to_hpa"]
    # A day of one-minute samples is enough for the tracker to land near its budget.
    assert 0.05 / 2 <= budget["realised"] <= 0.05 * 2
    # Overload beyond the threshold's ceiling is a part of the predictive overload.
    policies = report["policies"]
    assert isinstance(policies, dict)
    overload = policies["predictive"]["overload_minutes"]
    assert 0 <= budget["beyond_ceiling_minutes"] <= overload
    sweep = report["sweeps"]
    assert isinstance(sweep, dict)
    assert [p["overload_budget"] for p in sweep["predictive"]][:3] == [0.0002, 0.0005, 0.001]
    # Each point says how much of its overload lay beyond the ceiling; hpa's points have none.
    for point in sweep["predictive"]:
        assert 0 <= point["beyond_ceiling_minutes"] <= point["overload_minutes"]
    assert {p["beyond_ceiling_minutes"] for p in sweep["hpa"]} == {None}
    assert (
        main(["backtest", "--steps", "1800", "--model", "brown", "--overload-budget", "hpa"]) == 0
    )
    text = capsys.readouterr().out
    assert "(hpa's share): predictive overloaded" in text
    assert "overload minutes came above what the highest threshold (5 forecast spreads)" in text
    assert "sweeping the predictive overload budget" in text


def test_overload_budget_none_sizes_at_the_target_as_target_per_replica(
    capsys: pytest.CaptureFixture[str],
) -> None:
    budgeted = backtest_json(capsys, "--steps", "600", "--model", "brown")
    targeted = backtest_json(
        capsys, "--steps", "600", "--model", "brown", "--overload-budget", "none"
    )
    assert targeted["overload_budget"] is None
    sweeps = targeted["sweeps"]
    assert isinstance(sweeps, dict)
    # The matched comparison sweeps the headroom U, not the budget.
    assert all(point["overload_budget"] is None for point in sweeps["predictive"])
    assert all(point["beyond_ceiling_minutes"] is None for point in sweeps["predictive"])
    assert {point["utilisation"] for point in sweeps["predictive"]} != {0.7}
    assert budgeted["policies"] != targeted["policies"]


def test_a_csv_trace_with_its_own_step_and_a_plot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    t = np.arange(400)
    trace = write_trace(tmp_path / "load.csv", 100 + 50 * np.sin(2 * np.pi * t / 100))
    plot = tmp_path / "replay.png"
    report = backtest_json(
        capsys,
        "--trace", str(trace), "--column", "load", "--step", "30", "--history", "1h",
        "--model", "holt", "--plot", str(plot),
    )  # fmt: skip
    assert report["step_seconds"] == 30.0
    assert report["scored_steps"] == 400 - 120  # one hour of 30 s steps
    assert plot.read_bytes().startswith(b"\x89PNG")


def test_a_glitch_in_the_trace_is_replayed_and_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    load = 10 + np.sin(np.arange(400) / 10)
    load[300] = 1e12  # a metric glitch: 10^13 times what one replica serves
    load[200] = -1.0
    trace = write_trace(tmp_path / "load.csv", load)
    report = backtest_json(
        capsys, "--trace", str(trace), "--column", "load", "--history", "1h", "--model", "naive"
    )
    notes = report["notes"]
    assert isinstance(notes, list)
    assert notes[0] == "the forecasts read 1 of 400 values negative, read as 0"
    assert notes[1].startswith("step 300 holds 1e+12, ")
    assert "a glitch?" in notes[1]


def test_a_trace_coarser_than_the_default_long_step_runs_on_its_own_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """15-minute steps and the default 5-minute long step: the long history is the trace."""
    trace = write_trace(tmp_path / "load.csv", 10 + np.sin(np.arange(300) / 10), step=900)
    report = backtest_json(capsys, "--trace", str(trace), "--column", "load", "--model", "naive")
    assert report["step_seconds"] == 900.0
    # The default 6 h is 24 steps of 15 minutes, fewer than the models need: said so.
    assert report["scored_steps"] == 300 - MIN_HISTORY_STEPS
    assert report["notes"] == [
        "--history 6h is 24 steps of 15m; the forecasts read 60 (15h), the fewest a "
        "backtest scores models on, where the operator, with the same "
        "spec.forecast.history, reads 24"
    ]


def test_a_calm_trace_has_no_notes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = write_trace(tmp_path / "load.csv", 10 + np.sin(np.arange(400) / 10))
    report = backtest_json(
        capsys, "--trace", str(trace), "--column", "load", "--history", "1h", "--model", "naive"
    )
    assert report["notes"] == []


def test_the_text_report_names_each_policy(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["backtest", "--steps", "500", "--model", "naive"]) == 0
    text = capsys.readouterr().out
    for name in ("predictive", "hpa", "oracle", "overload minutes at hpa's cost"):
        assert name in text
    assert "the same policy and budget on forecasts no one can run" in text
    for name in ("predictive", "hindsight", "clairvoyant"):
        assert f"  {name} " in text
    assert "fewer than hpa): least squares of the load's recent samples" in text


def test_follow_hpa_is_replayed_and_reported(capsys: pytest.CaptureFixture[str]) -> None:
    warned = backtest_json(capsys, "--steps", "500", "--model", "naive")
    assert warned["followed_hpa_steps"] is None
    args = ("--steps", "500", "--model", "naive", "--when-worse-than-reactive", "FollowHPA")
    followed = backtest_json(capsys, *args)
    assert isinstance(followed["followed_hpa_steps"], int)
    assert 0 <= followed["followed_hpa_steps"] <= followed["scored_steps"]  # type: ignore[operator]
    assert main(["backtest", *args]) == 0
    assert "FollowHPA: predictive followed the shadow HPA's count" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--target", "1.5"], "--target must lie in (0, 1]"),
        (["--interval", "1"], "--interval (--level) must lie in (0, 1)"),
        (["--level", "1"], "--interval (--level) must lie in (0, 1)"),
        (["--trace", "missing.csv", "--column", "x"], "missing.csv"),
        (["--column", "no_such_column"], "no column 'no_such_column'"),
        (["--steps", "100"], "the backtest needs more than 360 steps of history (6h)"),
        # Refused before the replay, not after it, with the flag named.
        (["--plot", "replay.txt"], "--plot replay.txt: want a file ending in"),
        (["--plot", "no/such/folder/replay.png"], "no/such/folder is not a folder"),
    ],
)
def test_bad_input_exits_2_naming_the_problem(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["backtest", *args]) == 2
    assert message in capsys.readouterr().err


def test_ctrl_c_during_a_replay_ends_without_a_traceback(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("predictive_scaler.cli.backtest.run_backtest", interrupted)
    assert main(["backtest", "--steps", "600"]) == 130
    assert capsys.readouterr().err == "predictive-scaler backtest: interrupted\n"
