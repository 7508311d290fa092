"""Read load traces from CSV: ``#`` comment lines, a header, ``t_seconds`` plus value columns."""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from predictive_scaler.forecasting.forecast import FloatArray

TIME_COLUMN = "t_seconds"
# A three-day slice of the NASA HTTP 1995 trace ships with the package so the
# demo and tests work without ../shared (see the file's header for the source).
BUNDLED_TRACE = "nasa_http_1995_3days.csv"
BUNDLED_COLUMN = "requests_per_minute"


@dataclass(frozen=True)
class Trace:
    """One load series from a trace file; missing cells are NaN."""

    source: str
    column: str
    values: FloatArray
    step_seconds: float

    def __len__(self) -> int:
        return len(self.values)


def _number(cell: str) -> float:
    try:
        return float(cell)
    except ValueError:
        return math.nan


def read_trace(path: str | Path, column: str, where: Mapping[str, str] | None = None) -> Trace:
    """Read ``column`` of the rows matching ``where`` (e.g. ``{"vm": "vm_1"}``).

    Raises ValueError naming what is wrong: a missing column, no matching rows.
    """
    where = dict(where or {})
    with open(path, newline="", encoding="utf-8") as handle:
        rows = csv.reader(line for line in handle if line.strip() and not line.startswith("#"))
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
        for row in rows:
            if all(row[index] == wanted for index, wanted in filters):
                values.append(_number(row[value_index]) if value_index < len(row) else math.nan)
                if time_index is not None:
                    times.append(_number(row[time_index]))
    if not values:
        raise ValueError(f"{path}: no rows match {where}")
    steps = np.diff(np.asarray(times, dtype=np.float64))
    steps = steps[np.isfinite(steps) & (steps > 0)]
    step = float(np.median(steps)) if steps.size else 60.0
    return Trace(str(path), column, np.asarray(values, dtype=np.float64), step)


def bundled_trace_path() -> Path:
    return Path(str(resources.files("predictive_scaler") / "data" / BUNDLED_TRACE))
