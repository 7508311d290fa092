"""An interrupt that Python drops (raised inside a finalizer) still stops the demo's waits."""

from __future__ import annotations

import contextlib
import os
import signal

import pytest

from predictive_scaler_dev.demo.interrupts import interrupt_on_signals, stop_if_interrupted


def test_an_interrupt_is_remembered_after_its_exception_was_swallowed() -> None:
    # Whatever the test runner had (a background job inherits SIGINT ignored).
    before = signal.getsignal(signal.SIGINT)
    restore = interrupt_on_signals()
    try:
        stop_if_interrupted()  # nothing yet
        # As if raised in a finalizer, where Python ignores it.
        with contextlib.suppress(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
        with pytest.raises(KeyboardInterrupt):
            stop_if_interrupted()
    finally:
        restore()
    assert signal.getsignal(signal.SIGINT) == before
