"""Durations as users write them (90s, 5m, 6h, 1d), and counts as they read them ("1 replica")."""

from __future__ import annotations

import re

DURATION = re.compile(r"^(\d+(?:\.\d+)?)(s|m|h|d)?$")
UNIT_SECONDS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, None: 1.0}


def parse_duration(text: str, *, allow_zero: bool = False) -> float:
    """``90``, ``90s``, ``5m``, ``6h``, ``1d`` -> seconds; ValueError unless positive (or
    zero, with ``allow_zero``, however many zeros it is written with: 0s, 00m)."""
    match = DURATION.match(text.strip())
    seconds = None if match is None else float(match.group(1)) * UNIT_SECONDS[match.group(2)]
    if seconds is None or (seconds == 0 and not allow_zero):
        wanted = "a duration" if allow_zero else "a positive duration"
        raise ValueError(f"want {wanted} such as 90s, 5m, 6h or 1d, got {text!r}")
    return seconds


def format_duration(seconds: float) -> str:
    """Seconds in the coarsest unit that keeps them whole-ish: 90 -> 1.5m, 7200 -> 2h."""
    for unit, size in (("h", 3600.0), ("m", 60.0)):
        if seconds >= size:
            return f"{seconds / size:.3g}{unit}"
    return f"{seconds:.3g}s"


def percentage(text: str) -> float:
    """ "1.5%" as 0.015; ValueError when it is not a number followed by %."""
    if not text.endswith("%"):
        raise ValueError(f"expected a percentage such as 1%, got {text!r}")
    return float(text[:-1]) / 100.0


def counted(number: int, noun: str) -> str:
    """``1 replica``, ``3 replicas``: minReplicas is often 1, and "1 replicas" reads as a slip."""
    return f"{number} {noun}{'' if number == 1 else 's'}"
