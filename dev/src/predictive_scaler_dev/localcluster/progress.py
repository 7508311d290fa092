"""What a long build tells the person waiting: which component, how far, how long, how much left.

A cold build of the control plane takes minutes per component. On a terminal one
line is redrawn every second; without one (CI logs, pipes) a plain line is
printed when a phase starts and then every `plain_every` seconds, so a log shows
a build that is moving and never a silent gap. The time left comes from the
component's last measured build on this machine (`BuildTimes`), else from the
figure measured on the project's own two-core machine.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

Clock = Callable[[], float]


def duration(seconds: float) -> str:
    """`45s`, `3m10s`, `1h02m`: short enough for one status line."""
    whole = max(0, round(seconds))
    if whole < 60:
        return f"{whole}s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


@dataclass(frozen=True)
class Expected:
    """How long a component should take, and where that figure comes from."""

    seconds: float
    source: str  # "last build here" or "typical on 2 cores"


def remaining(elapsed: float, expected: Expected | None) -> str:
    if expected is None:
        return "no earlier build to estimate from"
    left = expected.seconds - elapsed
    if left > 0:
        return f"about {duration(left)} left ({expected.source}: {duration(expected.seconds)})"
    return f"longer than {expected.source} ({duration(expected.seconds)})"


class BuildTimes:
    """Each component's last measured build time, kept in the cache beside the binaries.

    Keyed by component name, not version: a version bump builds about as long as
    the version before it, and that is the estimate a user wants.
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    def _read(self) -> dict[str, float]:
        try:
            found = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}
        if not isinstance(found, dict):
            return {}
        return {str(k): float(v) for k, v in found.items() if isinstance(v, int | float)}

    def last(self, name: str) -> float | None:
        return self._read().get(name)

    def expected(self, name: str, typical_seconds: float) -> Expected:
        """The last build's time here, or ``typical_seconds`` before there was one."""
        last = self.last(name)
        if last is not None:
            return Expected(last, "last build here")
        return Expected(typical_seconds, "typical on 2 cores")

    def record(self, name: str, seconds: float) -> None:
        times = self._read()
        times[name] = round(seconds, 1)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_suffix(".partial")
        partial.write_text(json.dumps(times, indent=1, sort_keys=True) + "\n")
        partial.replace(self.path)


@dataclass
class _Status:
    label: str
    started: float
    expected: Expected | None
    phase: str = "starting"
    done: int = 0
    total: int | None = None
    phase_changed: bool = True


class ComponentProgress:
    """The handle a build step uses to say what it is doing now."""

    def __init__(self, status: _Status, lock: threading.Lock) -> None:
        self._status = status
        self._lock = lock

    def phase(self, text: str, total: int | None = None) -> None:
        with self._lock:
            self._status.phase = text
            self._status.total = total
            self._status.done = 0
            self._status.phase_changed = True

    def advance(self) -> None:
        with self._lock:
            self._status.done += 1


class BuildProgress:
    """Shows one component's build at a time; `component()` is a context manager around it."""

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        interactive: bool | None = None,
        plain_every: float = 30.0,
        refresh: float = 1.0,
        clock: Clock = time.monotonic,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.interactive = self.stream.isatty() if interactive is None else interactive
        self.plain_every = plain_every
        self.refresh = refresh
        self.clock = clock
        self._lock = threading.Lock()
        self._status: _Status | None = None
        self._last_plain = 0.0

    def line(self) -> str:
        """The current status in words (what both the terminal line and a plain line show)."""
        with self._lock:
            status = self._status
            if status is None:
                return ""
            elapsed = self.clock() - status.started
            phase = status.phase
            if status.total:
                phase = f"{phase} {status.done:,}/{status.total:,}"
            return (
                f"{status.label}: {phase}, {duration(elapsed)} so far, "
                f"{remaining(elapsed, status.expected)}"
            )

    def say(self, text: str) -> None:
        """A line of its own, above the redrawn status line on a terminal."""
        if self.interactive:
            self.stream.write("\r\033[K")
        self.stream.write(text + "\n")
        self.stream.flush()

    def show(self) -> None:
        """Draw the status now: redraw on a terminal; a plain line when one is due."""
        text = self.line()
        if not text:
            return
        if self.interactive:
            self.stream.write("\r\033[K" + text)
            self.stream.flush()
            return
        now = self.clock()
        with self._lock:
            status = self._status
            due = status is not None and (
                status.phase_changed or now - self._last_plain >= self.plain_every
            )
            if status is not None:
                status.phase_changed = False
        if due:
            self._last_plain = now
            self.say(text)

    @contextmanager
    def component(self, label: str, expected: Expected | None) -> Iterator[ComponentProgress]:
        status = _Status(label=label, started=self.clock(), expected=expected)
        with self._lock:
            self._status = status
        stop = threading.Event()
        ticker = threading.Thread(target=self._tick, args=(stop,), daemon=True)
        self.show()
        ticker.start()
        try:
            yield ComponentProgress(status, self._lock)
        except BaseException:
            stop.set()
            ticker.join()
            self.say(f"{label}: failed after {duration(self.clock() - status.started)}")
            raise
        finally:
            stop.set()
            ticker.join()
            with self._lock:
                self._status = None
        self.say(f"{label}: built in {duration(self.clock() - status.started)}")

    def _tick(self, stop: threading.Event) -> None:
        while not stop.wait(self.refresh):
            self.show()
