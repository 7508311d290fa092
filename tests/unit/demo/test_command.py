"""`predictive-scaler demo` refuses what it cannot do before it starts a cluster."""

from __future__ import annotations

from pathlib import Path

import pytest

from predictive_scaler.cli import main


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--start-hour", "20", "--hours", "6"], "the replay must lie within the day"),
        (["--seconds-per-step", "0.5"], "seconds per step must be >= 1"),
        (["--output", "{file}/demo"], "--output {file}/demo: Not a directory"),
    ],
    ids=["beyond-the-day", "too-fast", "output-under-a-file"],
)
def test_bad_options_exit_2_with_one_line_and_no_cluster(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    filled = [arg.format(file=a_file) for arg in args]
    assert main(["demo", *filled]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("predictive-scaler demo: error: ")
    assert captured.err.count("\n") == 1, captured.err
    assert message.format(file=a_file) in captured.err
    assert captured.out == "", "nothing was started"
