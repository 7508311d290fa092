"""The live terminal view: what the operator sees, decides and has done, redrawn in place.

On a terminal the block is redrawn every second; piped into a file (CI, a
log), a single line is printed every few steps instead, so the output stays
readable without a terminal.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

SPARKS = "▁▂▃▄▅▆▇█"
BAR_WIDTH = 30
SPARK_WIDTH = 40


@dataclass(frozen=True)
class Frame:
    """One moment of the replay, from the driver and the PredictiveScaler's status."""

    seconds: float
    duration: float
    clock: str  # trace time of day
    warming_up: bool  # replaying the history window, not yet scored
    load: float  # cores, as the driver set it
    replicas: int  # spec.replicas of the Deployment
    running: int  # pods serving load
    capacity: float  # cores one replica serves
    status: dict[str, Any] = field(default_factory=dict)
    overload_minutes: float = 0.0
    load_history: Sequence[float] = ()
    replica_history: Sequence[int] = ()


def sparkline(values: Sequence[float], *, top: float | None = None) -> str:
    tail = list(values)[-SPARK_WIDTH:]
    if not tail:
        return ""
    high = top if top is not None else max(tail)
    if high <= 0:
        return SPARKS[0] * len(tail)
    return "".join(SPARKS[min(len(SPARKS) - 1, int(v / high * (len(SPARKS) - 1)))] for v in tail)


def progress_bar(done: float) -> str:
    filled = math.floor(max(0.0, min(1.0, done)) * BAR_WIDTH)
    return "█" * filled + "░" * (BAR_WIDTH - filled)


def _forecast_line(status: dict[str, Any]) -> str:
    forecast = status.get("forecast")
    if not forecast:
        return "forecast  (gathering history: the model is chosen once enough is in Prometheus)"
    level = float(forecast.get("level", 0.0))
    return (
        f"forecast  {forecast['value']:5.2f} cores in {forecast['horizon']}, "
        f"{level:.0%} interval {forecast['lower']:.2f}-{forecast['upper']:.2f}"
        f"   model {forecast['model']}"
    )


def render(frame: Frame) -> list[str]:
    done = frame.seconds / frame.duration if frame.duration else 1.0
    serving = frame.running * frame.capacity
    state = "OVERLOADED" if frame.load > serving else "ok"
    status = frame.status
    phase = "warm-up, not scored" if frame.warming_up else "scored"
    return [
        f"trace {frame.clock}  {progress_bar(done)} {done:4.0%}"
        f"   {frame.seconds:4.0f} s of {frame.duration:.0f} s ({phase})",
        f"load      {frame.load:5.2f} cores   {sparkline(frame.load_history)}",
        _forecast_line(status),
        f"replicas  {frame.replicas:3d} asked, {frame.running:3d} running, "
        f"desired {status.get('desiredReplicas', '-')}   {sparkline(frame.replica_history)}",
        f"serving   {serving:5.2f} cores at {frame.capacity:g} per pod: {state}"
        f"   overload so far {frame.overload_minutes:.0f} trace min",
        f"decision  {status.get('decision', '(none yet)')}",
    ]


def one_line(frame: Frame) -> str:
    # The decision names the model, the forecast it sized for and the load
    # provisioned; the band's upper bound beside it read as a second forecast.
    clock = f"{frame.clock} warm-up" if frame.warming_up else frame.clock
    return (
        f"[{clock}] load {frame.load:.2f} cores, replicas {frame.replicas} "
        f"({frame.running} running): {frame.status.get('decision', '(no decision yet)')}"
    )


class LiveView:
    """Redraws the frame in place on a terminal; prints a line every `every` seconds otherwise."""

    def __init__(self, stream: TextIO, *, every: float = 10.0) -> None:
        self.stream = stream
        self.interactive = stream.isatty()
        self.every = every
        self._drawn = 0
        self._last_line = -math.inf

    def show(self, frame: Frame) -> None:
        if self.interactive:
            lines = render(frame)
            # Up to the first line of the previous block, then overwrite each line.
            up = f"\x1b[{self._drawn}F" if self._drawn else ""
            self.stream.write(up + "".join(f"\x1b[2K{line}\n" for line in lines))
            self._drawn = len(lines)
        elif frame.seconds - self._last_line >= self.every:
            self.stream.write(one_line(frame) + "\n")
            self._last_line = frame.seconds
        self.stream.flush()
