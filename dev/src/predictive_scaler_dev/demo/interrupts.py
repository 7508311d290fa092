"""Ctrl-C and SIGTERM during a demo: both interrupt it, and neither cuts its clean-up short."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator

INTERRUPTS = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def cleanup_that_finishes() -> Iterator[contextlib.ExitStack]:
    """An ExitStack whose clean-up a second Ctrl-C cannot cut short."""
    stack = contextlib.ExitStack()
    try:
        yield stack
    finally:
        main = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
        try:
            stack.close()
        finally:
            if main:
                signal.signal(signal.SIGINT, previous)


# Set by Ctrl-C or SIGTERM. Python drops an exception raised inside a finalizer
# (an HTTP pool closed by the garbage collector, say), so the demo's waits also
# look here: an interrupt that lands there is acted on a moment later.
_interrupted = threading.Event()


def stop_if_interrupted() -> None:
    if _interrupted.is_set():
        raise KeyboardInterrupt


def interrupt_on_signals() -> Callable[[], None]:
    """Ctrl-C and SIGTERM clean up alike; returns a function restoring the previous handlers."""

    def interrupt(signum: int, frame: object) -> None:
        _interrupted.set()
        raise KeyboardInterrupt

    _interrupted.clear()
    previous = {number: signal.signal(number, interrupt) for number in INTERRUPTS}

    def restore() -> None:
        for number, handler in previous.items():
            signal.signal(number, handler)

    return restore
