"""Argument types shared by the subcommands."""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from dataclasses import dataclass

from predictive_scaler.scaling.spec import ROUNDING
from predictive_scaler.traces import BUNDLED_COLUMN, Trace, bundled_trace_path, read_trace
from predictive_scaler.units import parse_duration


def parse_where(pairs: Sequence[str]) -> dict[str, str]:
    where = {}
    for pair in pairs:
        column, separator, value = pair.partition("=")
        if not separator or not column:
            raise argparse.ArgumentTypeError(f"--where wants COLUMN=VALUE, got {pair!r}")
        where[column] = value
    return where


def _whole_number(text: str, lowest: int) -> int:
    # argparse names a type function that raises ValueError by its Python name; say it in words.
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"want a whole number, got {text!r}") from None
    if value < lowest:
        raise argparse.ArgumentTypeError(f"must be >= {lowest}, got {value}")
    return value


def positive_int(text: str) -> int:
    return _whole_number(text, 1)


def non_negative_int(text: str) -> int:
    return _whole_number(text, 0)


def duration_seconds(text: str) -> float:
    """``90``, ``90s``, ``5m``, ``6h``, ``1d`` -> seconds (> 0)."""
    try:
        return parse_duration(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


@dataclass(frozen=True)
class HistoryLength:
    """How much of a trace a command reads: a number of points, or a duration."""

    points: int | None = None
    seconds: float | None = None

    def points_at(self, step_seconds: float) -> int:
        """Points at ``step_seconds`` apart (a duration: its steps, a part of one counting
        whole, as ``backtest --history`` counts them)."""
        if self.points is not None:
            return self.points
        assert self.seconds is not None
        return max(1, math.ceil(self.seconds / step_seconds - ROUNDING))


def points_or_duration(text: str) -> HistoryLength:
    """``400`` -> 400 points; ``6h``, ``90s`` -> a duration (as ``backtest --history`` reads)."""
    if text.strip().isdecimal():
        return HistoryLength(points=positive_int(text))
    try:
        # A number without a unit counts points here, so a duration must name its unit.
        if not text.strip()[-1:].isalpha():
            raise ValueError(text)
        return HistoryLength(seconds=parse_duration(text))
    except ValueError:
        raise argparse.ArgumentTypeError(
            "want a whole number of points or a positive duration such as 90s, 5m, 6h or 1d, "
            f"got {text!r}"
        ) from None


def add_trace_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--trace", help="CSV file ('#' lines are comments; header first)")
    parser.add_argument(
        "--column", help=f"value column (default for the bundled trace: {BUNDLED_COLUMN})"
    )
    parser.add_argument(
        "--where",
        action="append",
        default=[],
        metavar="COLUMN=VALUE",
        help="keep only rows where COLUMN equals VALUE (repeatable)",
    )


def load_trace(args: argparse.Namespace) -> Trace:
    """The trace the arguments name, or the bundled NASA slice without ``--trace``."""
    if args.trace is None:
        return read_trace(bundled_trace_path(), args.column or BUNDLED_COLUMN)
    if args.column is None:
        raise ValueError("--column is required with --trace")
    return read_trace(args.trace, args.column, parse_where(args.where))
