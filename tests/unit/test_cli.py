"""``predictive-scaler forecast`` as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from predictive_scaler.cli import main


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    assert main(["forecast", *args, "--json"]) == 0
    report: dict[str, object] = json.loads(capsys.readouterr().out)
    return report


def test_forecast_on_the_bundled_trace_with_one_model(capsys: pytest.CaptureFixture[str]) -> None:
    report = run_json(capsys, "--model", "brown", "--horizon", "3", "--level", "0.9")
    assert report["model"] == "brown"
    assert report["points"] == 4320
    steps = report["forecast"]
    assert isinstance(steps, list)
    assert [step["step"] for step in steps] == [1, 2, 3]
    assert [step["seconds_ahead"] for step in steps] == [60.0, 120.0, 180.0]
    assert all(step["lower"] <= step["mean"] <= step["upper"] for step in steps)
    assert report["backtest_errors"] is None


@pytest.mark.parametrize("history", ["120", "2h", "7200s", "7170s"])
def test_the_history_is_points_or_a_duration_as_backtest_reads_it(
    history: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # The bundled trace is at 1-minute steps: 2 h are 120 points, a part of a step a whole one.
    report = run_json(capsys, "--model", "naive", "--history", history)
    assert report["points"] == 120


def test_the_interval_level_has_one_name_in_both_commands(
    capsys: pytest.CaptureFixture[str],
) -> None:
    as_level = run_json(capsys, "--model", "naive", "--level", "0.6")
    as_interval = run_json(capsys, "--model", "naive", "--interval", "0.6")
    assert as_level["level"] == as_interval["level"] == 0.6
    assert as_level["forecast"] == as_interval["forecast"]


def test_auto_reports_the_backtest_errors(capsys: pytest.CaptureFixture[str]) -> None:
    report = run_json(capsys, "--model", "auto", "--history", "400", "--horizon", "2")
    errors = report["backtest_errors"]
    assert isinstance(errors, dict)
    # The pool's members and naive, the reference, are scored whether or not the pool holds.
    assert {"naive", "holt", "ets", "arima", "arima_rbf"} <= set(errors)
    notes = report["notes"]
    assert isinstance(notes, list)
    assert any(note.startswith("auto chose ") for note in notes)


def test_text_output_shows_a_table(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    trace = tmp_path / "t.csv"
    trace.write_text("# test\nt_seconds,rps\n" + "".join(f"{i * 10},{i % 7}\n" for i in range(60)))
    assert main(["forecast", "--trace", str(trace), "--column", "rps", "--model", "naive"]) == 0
    out = capsys.readouterr().out
    assert "model naive, 80% prediction interval" in out
    assert "step 10s" in out
    assert out.count("s  ") >= 5


def test_what_the_input_hygiene_changed_is_a_note(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    trace = tmp_path / "t.csv"
    rows = [f"{i * 60},{-2 if i == 7 else ('' if i == 9 else 5)}\n" for i in range(40)]
    trace.write_text("t_seconds,load\n" + "".join(rows))
    report = run_json(capsys, "--trace", str(trace), "--column", "load", "--model", "naive")
    notes = report["notes"]
    assert isinstance(notes, list)
    assert "1 of 40 values negative, read as 0" in notes
    assert "1 of 40 values missing or infinite, filled from their neighbours" in notes


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--trace", "missing.csv", "--column", "x"], "No such file"),
        (["--trace", "x.csv"], "--column is required"),
        (["--column", "nope"], "no column 'nope'"),
        (["--level", "1.5"], "--level (--interval) must lie in (0, 1)"),
        (["--interval", "0"], "--level (--interval) must lie in (0, 1)"),
        (["--horizon", "100000000"], "--horizon must be at most 10,000 steps"),
    ],
)
def test_bad_input_is_a_clear_error_and_exit_code_2(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert main(["forecast", *args]) == 2
    assert message in capsys.readouterr().err


def test_the_console_script_runs_as_a_module() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "predictive_scaler", "forecast", "--model", "gm11", "--json"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["model"] == "gm11"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        *(
            (["forecast", "--history", history], "argument --history: want a whole number")
            for history in ("5 minutes", "0s", "3 points", "1.5")
        ),
        (["forecast", "--history", "0"], "argument --history: must be >= 1, got 0"),
        (["backtest", "--history", "six hours"], "argument --history: want a positive duration"),
        *(
            (["backtest", "--step", step], "argument --step: want a positive duration")
            for step in ("nan", "inf", "0", "-30", "30x")
        ),
        (
            ["backtest", "--when-worse-than-reactive", "followhpa"],
            "want one of Warn, FollowHPA, got 'followhpa'",
        ),
        *(
            (["backtest", "--overload-budget", budget], "argument --overload-budget")
            for budget in ("5", "0%", "60%", "lots")
        ),
    ],
)
def test_a_flag_value_argparse_refuses_exits_2_naming_the_flag(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_too_few_points_to_backtest_is_one_note_not_a_failed_candidate(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    trace = tmp_path / "short.csv"
    trace.write_text("t_seconds,load\n0,1\n60,2\n", encoding="utf-8")
    report = run_json(capsys, "--trace", str(trace), "--column", "load")
    assert report["backtest_errors"] == {}
    notes = report["notes"]
    assert isinstance(notes, list)
    assert "2 points are too few to backtest" in notes


def test_the_text_table_ranks_candidates_best_first(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["forecast", "--history", "400"]) == 0
    table = capsys.readouterr().out.split("lower is better):\n")[1].split("\nnote:")[0]
    scores = [line.split()[-1] for line in table.splitlines()]
    numbers = [float(score) for score in scores if score != "failed"]
    assert numbers == sorted(numbers)
    assert scores[len(numbers) :] == ["failed"] * (len(scores) - len(numbers))


def test_a_series_with_nothing_to_forecast_names_its_file_and_column(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    trace = tmp_path / "empty.csv"
    trace.write_text("t_seconds,load,other\n0,,1\n60,,2\n", encoding="utf-8")
    assert main(["forecast", "--trace", str(trace), "--column", "load"]) == 2
    assert f"{trace} [load]: " in capsys.readouterr().err
