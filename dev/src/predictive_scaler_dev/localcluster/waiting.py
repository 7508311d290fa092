"""Polling with a deadline: how the local cluster's users wait, never a bare sleep."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_until(
    condition: Callable[[], bool], *, timeout: float, what: str, interval: float = 0.2
) -> None:
    """Poll ``condition`` until it holds; TimeoutError naming ``what`` at the deadline."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} did not happen within {timeout:.0f} s")
        time.sleep(interval)
