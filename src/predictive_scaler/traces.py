"""Read load traces from CSV: ``#`` comment lines, a header, ``t_seconds`` plus value columns.

A file whose name ends in ``.gz`` is read through gzip, so traces are kept compressed.
"""

from __future__ import annotations

import csv
import gzip
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TextIO

import numpy as np

from predictive_scaler.forecasting.forecast import FloatArray

TIME_COLUMN = "t_seconds"
# A three-day slice of the NASA HTTP 1995 trace ships with the package, so the
# demo and `forecast` work from an installed package (see the file's header for the source).
BUNDLED_TRACE = "nasa_http_1995_3days.csv"
BUNDLED_COLUMN = "requests_per_minute"
# A trace without times is taken to hold one sample a minute, and says so.
ASSUMED_STEP_SECONDS = 60.0


@dataclass(frozen=True)
class Trace:
    """One load series from a trace file; missing cells are NaN."""

    source: str
    column: str
    values: FloatArray
    step_seconds: float
    # What was assumed in reading it, in words (a step no t_seconds gave).
    notes: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.values)


def _parsed(cell: str) -> float | None:
    """The cell's number, None when it holds none."""
    try:
        return float(cell)
    except ValueError:
        return None


def _number(cell: str) -> float:
    value = _parsed(cell)
    return math.nan if value is None else value


def open_trace(path: str | Path) -> TextIO:
    """The trace file as text, decompressed when its name ends in ``.gz``."""
    if str(path).endswith(".gz"):
        return gzip.open(path, "rt", newline="", encoding="utf-8")
    return open(path, newline="", encoding="utf-8")


def _data_lines(handle: TextIO) -> Iterator[str]:
    return (line for line in handle if line.strip() and not line.startswith("#"))


def trace_rows(path: str | Path) -> Iterator[dict[str, str]]:
    """Every data row as ``{column: cell}``, comments skipped."""
    with open_trace(path) as handle:
        yield from csv.DictReader(_data_lines(handle))


def column_values(path: str | Path, column: str) -> list[str]:
    """Distinct values of ``column`` in file order (the VMs of a per-VM trace, say)."""
    return list(dict.fromkeys(row[column] for row in trace_rows(path)))


def read_trace(path: str | Path, column: str, where: Mapping[str, str] | None = None) -> Trace:
    """Read ``column`` of the rows matching ``where`` (e.g. ``{"vm": "vm_1"}``).

    Raises ValueError naming what is wrong: a missing column, no matching rows,
    a column without a single number, an infinite value, times that go back
    or repeat (rows must be oldest first, one per step: a replay of them
    would run time backwards, or count one step twice).
    """
    where = dict(where or {})
    try:
        return _read_trace(path, column, where)
    except (EOFError, csv.Error, UnicodeDecodeError, gzip.BadGzipFile) as error:
        # What a file that is not a trace (cut short, binary, not gzip) raises while read.
        raise ValueError(f"{path}: not a readable trace: {_unreadable(error)}") from error


def _unreadable(error: Exception) -> str:
    if isinstance(error, EOFError):
        return "the compressed file ends early (cut short?)"
    if isinstance(error, UnicodeDecodeError):
        return f"not UTF-8 text (byte {error.object[error.start]:#04x} at {error.start})"
    return str(error)


def _cell(row: list[str], index: int) -> str:
    """The row's cell at ``index``; a row cut short has an empty one there."""
    return row[index] if index < len(row) else ""


def _read_trace(path: str | Path, column: str, where: dict[str, str]) -> Trace:
    with open_trace(path) as handle:
        rows = csv.reader(_data_lines(handle))
        header = next(rows, None)
        if header is None:
            raise ValueError(f"{path}: no header line")
        for name in [column, *where]:
            if name not in header:
                raise ValueError(f"{path}: no column {name!r}; columns are {', '.join(header)}")
        value_index = header.index(column)
        filters = [(header.index(name), wanted) for name, wanted in where.items()]
        time_index = header.index(TIME_COLUMN) if TIME_COLUMN in header else None
        values: list[float] = []
        times: list[float] = []
        # An empty or unreadable cell is a missing sample; a column of nothing
        # else is the wrong column.
        numbers, unreadable = 0, None
        for row in rows:
            if all(_cell(row, index) == wanted for index, wanted in filters):
                cell = _cell(row, value_index).strip()
                value = _parsed(cell)
                values.append(math.nan if value is None else value)
                if value is not None:
                    numbers += 1
                elif cell and unreadable is None:
                    unreadable = cell
                if time_index is not None:
                    times.append(_number(_cell(row, time_index)))
    if not values:
        matching = ", ".join(f"{name}={wanted}" for name, wanted in where.items())
        raise ValueError(f"{path}: no rows match {matching}" if where else f"{path}: no data rows")
    if not numbers and unreadable is not None:
        raise ValueError(f"{path}: column {column!r} holds no numbers (first cell {unreadable!r})")
    infinite = np.flatnonzero(np.isinf(np.asarray(values, dtype=np.float64)))
    if infinite.size:
        at = int(infinite[0]) + 1
        raise ValueError(
            f"{path}: column {column!r} is {values[at - 1]:g} at data row {at}"
            f"{', counting matching rows' if where else ''}: a load is a finite number "
            "(leave the cell empty for a missing sample)"
        )
    steps = np.diff(np.asarray(times, dtype=np.float64))
    # A time that repeats is as wrong as one that goes back: one row per step.
    back = np.flatnonzero(steps <= 0)
    if back.size:
        at = int(back[0]) + 1
        hint = "" if where else "; several series in one file? --where keeps one"
        moves = "repeats" if steps[at - 1] == 0 else f"goes back from {times[at - 1]:g} to"
        raise ValueError(
            f"{path}: {TIME_COLUMN} {moves} {times[at]:g} "
            f"(data row {at + 1}{', counting matching rows' if where else ''}): rows must be "
            f"oldest first, one per step{hint}"
        )
    step, notes = _step_of(steps, timed=time_index is not None)
    return Trace(str(path), column, np.asarray(values, dtype=np.float64), step, notes)


def _step_of(steps: FloatArray, *, timed: bool) -> tuple[float, tuple[str, ...]]:
    """The trace's step (the median time between rows) and, when it had to be assumed, why."""
    steps = steps[np.isfinite(steps) & (steps > 0)]
    if steps.size:
        return float(np.median(steps)), ()
    why = f"no two {TIME_COLUMN} values" if timed else f"no {TIME_COLUMN} column"
    return ASSUMED_STEP_SECONDS, (f"{why}: one step taken as {ASSUMED_STEP_SECONDS:g} s",)


def bundled_trace_path() -> Path:
    return Path(str(resources.files("predictive_scaler") / "data" / BUNDLED_TRACE))
