"""Polling with a deadline: how the local cluster's users wait, never a bare sleep."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def read_until(
    read: Callable[[], T],
    accept: Callable[[T], bool],
    *,
    timeout: float,
    what: str,
    interval: float = 0.2,
) -> T:
    """Repeat ``read`` until ``accept`` approves it; the read it approved, as a later one
    may differ. TimeoutError naming ``what`` and the last read at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        found = read()
        if accept(found):
            return found
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} did not happen within {timeout:.0f} s (last read: {found})")
        time.sleep(interval)


def wait_until(
    condition: Callable[[], bool], *, timeout: float, what: str, interval: float = 0.2
) -> None:
    """Poll ``condition`` until it holds; TimeoutError naming ``what`` at the deadline."""
    read_until(condition, bool, timeout=timeout, what=what, interval=interval)
