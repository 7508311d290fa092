"""Reading CSV load traces."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from predictive_scaler.traces import (
    BUNDLED_COLUMN,
    bundled_trace_path,
    column_values,
    read_trace,
    trace_rows,
)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "trace.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_comments_header_and_values(tmp_path: Path) -> None:
    path = write(tmp_path, "# source\n# units\nt_seconds,load\n0,1.5\n30,2.5\n\n60,\n90,4\n")
    trace = read_trace(path, "load")
    np.testing.assert_array_equal(trace.values[[0, 1, 3]], [1.5, 2.5, 4.0])
    assert np.isnan(trace.values[2])
    assert trace.step_seconds == 30.0
    assert len(trace) == 4


def test_rows_can_be_selected_by_another_column(tmp_path: Path) -> None:
    path = write(tmp_path, "vm,t_seconds,cpu\na,0,1\nb,0,9\na,300,2\n")
    trace = read_trace(path, "cpu", where={"vm": "a"})
    np.testing.assert_array_equal(trace.values, [1.0, 2.0])
    assert trace.step_seconds == 300.0


@pytest.mark.parametrize(
    ("column", "where", "message"),
    [
        ("nope", None, "no column 'nope'; columns are vm, t_seconds, cpu"),
        ("cpu", {"host": "a"}, "no column 'host'"),
        ("cpu", {"vm": "zz"}, "no rows match vm=zz$"),
    ],
)
def test_errors_name_what_is_wrong(
    tmp_path: Path, column: str, where: dict[str, str] | None, message: str
) -> None:
    path = write(tmp_path, "vm,t_seconds,cpu\na,0,1\n")
    with pytest.raises(ValueError, match=message):
        read_trace(path, column, where)


def test_bundled_slice_ships_with_the_package() -> None:
    trace = read_trace(bundled_trace_path(), BUNDLED_COLUMN)
    assert len(trace) == 3 * 24 * 60
    assert trace.step_seconds == 60.0
    assert np.isfinite(trace.values).all()
    header = bundled_trace_path().read_text(encoding="utf-8").splitlines()[:2]
    assert any("NASA" in line and line.startswith("#") for line in header)


def test_a_gzip_compressed_trace_reads_as_its_plain_text(tmp_path: Path) -> None:
    text = "# per-VM\nvm,t_seconds,cpu\na,0,1\nb,0,9\na,300,2\n"
    plain = write(tmp_path, text)
    packed = tmp_path / "trace.csv.gz"
    packed.write_bytes(gzip.compress(text.encode()))
    for path in (plain, packed):
        np.testing.assert_array_equal(read_trace(path, "cpu", where={"vm": "a"}).values, [1, 2])
        assert [row["cpu"] for row in trace_rows(path)] == ["1", "9", "2"]
        assert column_values(path, "vm") == ["a", "b"]


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("t_seconds,load\n", None, "no data rows"),
        ("t_seconds,load\n0,abc\n60,\n120,n/a\n", None, "column 'load' holds no numbers"),
        (
            "t_seconds,load\n120,1\n60,2\n0,3\n",
            None,
            "t_seconds goes back from 120 to 60 \\(data row 2\\): rows must be oldest first, "
            "one per step; several series in one file\\? --where keeps one",
        ),
        ("vm,t_seconds,load\na,0,1\nb,0,2\na,300,3\na,0,4\n", {"vm": "a"}, "goes back"),
        (
            "vm,t_seconds,load\na,0,1\nb,0,2\na,300,3\nb,300,4\n",
            None,
            "t_seconds repeats 0 \\(data row 2\\): .* several series in one file",
        ),
        (
            "t_seconds,load\n0,1\n60,inf\n120,3\n",
            None,
            "column 'load' is inf at data row 2: a load is a finite number",
        ),
    ],
    ids=[
        "no-rows",
        "no-numbers",
        "newest-first",
        "back-within-a-series",
        "series-interleaved",
        "infinite",
    ],
)
def test_a_trace_that_cannot_be_replayed_says_why(
    tmp_path: Path, text: str, where: dict[str, str] | None, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        read_trace(write(tmp_path, text), "load", where)


def test_unreadable_cells_among_numbers_are_missing_samples(tmp_path: Path) -> None:
    trace = read_trace(write(tmp_path, "t_seconds,load\n0,1\n60,n/a\n120,3\n"), "load")
    np.testing.assert_array_equal(np.isnan(trace.values), [False, True, False])


def test_a_row_cut_short_is_a_missing_sample_not_a_crash(tmp_path: Path) -> None:
    trace = read_trace(
        write(tmp_path, "vm,t_seconds,load\na,0,1\na\na,120,3\n"), "load", {"vm": "a"}
    )
    np.testing.assert_array_equal(np.isnan(trace.values), [False, True, False])


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("cut.csv.gz", gzip.compress(b"t_seconds,load\n" + b"0,1\n" * 500)[:-20], "ends early"),
        ("plain.csv.gz", b"t_seconds,load\n0,1\n", "Not a gzipped file"),
        ("binary.csv", b"t_seconds,load\n0,\x80\x81\n", "not UTF-8 text \\(byte 0x80"),
        ("huge.csv", b't_seconds,load\n0,"' + b"9" * 200_000 + b'"\n', "field larger than"),
    ],
)
def test_a_file_that_is_not_a_trace_is_named_with_why(
    tmp_path: Path, name: str, content: bytes, message: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(ValueError, match=f"{name}: not a readable trace: .*{message}"):
        read_trace(path, "load")


def test_a_trace_without_times_says_which_step_it_was_given(tmp_path: Path) -> None:
    trace = read_trace(write(tmp_path, "load\n1\n2\n3\n"), "load")
    assert trace.step_seconds == 60.0
    assert trace.notes == ("no t_seconds column: one step taken as 60 s",)
    timed = read_trace(write(tmp_path, "t_seconds,load\n0,1\n30,2\n"), "load")
    assert timed.notes == ()
