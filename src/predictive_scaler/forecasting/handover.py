"""A model selection handed to another worker: what is awaited, what came back, when to ask again.

One workload's forecaster (:class:`~.refresh.ScheduledSelection`) decides
when a selection is due; this keeps the other half, the exchange with
whoever runs it: the request awaited (a later one supersedes it), the
outcome delivered from any thread until the forecaster takes it, and, after
a failure, how long to wait before asking again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from predictive_scaler.forecasting.refresh_job import Refreshed, RefreshRequest, refresh_model
from predictive_scaler.units import counted, format_duration

# A failed selection is tried again after this, doubling with each failure in
# a row up to the refresh period. A worker that died is retried soon; a
# selection that fails on this load every time (or never returns and is
# stopped, holding a worker for minutes each time) must not be asked for again
# at every evaluation, starving the other objects' selections.
RETRY_AFTER_SECONDS = 60.0

Delivery = Callable[[Refreshed | Exception], None]
# Hands a selection to another worker, with where its outcome is to be delivered
# and how long it may wait behind more urgent selections (seconds): none for a
# first selection (the object has no forecast until it lands), one refresh
# period for a re-selection (the model in place forecasts meanwhile).
Submit = Callable[[RefreshRequest, Delivery, float], None]


def run_here(request: RefreshRequest, deliver: Delivery, may_wait: float) -> None:
    """The selection run in the caller: its outcome lands before this returns, its errors
    are raised."""
    deliver(refresh_model(request))


@dataclass(frozen=True)
class Landed:
    """A selection that came back, and the request it answers."""

    request: RefreshRequest
    refreshed: Refreshed


class SelectionHandover:
    """The selections one workload hands to ``submit``, and their outcomes.

    ``refresh_seconds`` bounds the wait after failures in a row. Outcomes are
    delivered from another thread while the forecaster hands requests over in
    its own, so which request is awaited and what came back change under one
    lock, and an outcome is kept with its request: one that a later request
    superseded while it was on its way is dropped, never installed.
    """

    def __init__(self, submit: Submit, refresh_seconds: float) -> None:
        self._submit = submit
        self._refresh_seconds = refresh_seconds
        self._lock = threading.Lock()
        self._awaited: RefreshRequest | None = None
        # How long the awaited selection was allowed to wait behind others.
        self._may_wait = 0.0
        self._arrived: tuple[RefreshRequest, Refreshed | Exception] | None = None
        # The failure taken by the last receive(), until take_failure() is called.
        self._failed: str | None = None
        # Why the last selection failed, while no later one has succeeded; how many
        # failed in a row, and when the next may be asked for.
        self.failure: str | None = None
        self.failures_in_a_row = 0
        self.retry_at: float | None = None

    @property
    def selecting(self) -> bool:
        """A selection has been handed over and has not come back."""
        return self._awaited is not None

    def deliver(self, outcome: Refreshed | Exception) -> None:
        """The outcome of the awaited selection; taken at the forecaster's next call."""
        awaited = self._awaited
        if awaited is not None:
            self._deliver_for(awaited, outcome)

    def wants(self, request: RefreshRequest) -> bool:
        """Whether ``request`` is the selection awaited (not superseded by a later one)."""
        return request is self._awaited

    def _deliver_for(self, request: RefreshRequest, outcome: Refreshed | Exception) -> None:
        with self._lock:
            if request is self._awaited:
                self._arrived = (request, outcome)

    def take_failure(self) -> str | None:
        """Why the selection that came back since the last call of this failed, if one did."""
        failed, self._failed = self._failed, None
        return failed

    def retry_pending(self, now: float) -> bool:
        """A selection failed and the wait before asking again has not passed."""
        return self.retry_at is not None and now < self.retry_at

    def receive(self, now: float) -> Landed | None:
        """The selection that came back since the last call, None if none did or it failed."""
        with self._lock:
            arrived, self._arrived = self._arrived, None
            if arrived is None or arrived[0] is not self._awaited:
                return None
            self._awaited = None
        request, outcome = arrived
        if not isinstance(outcome, Exception):
            self.failure, self.failures_in_a_row, self.retry_at = None, 0, None
            return Landed(request, outcome)
        self.failures_in_a_row += 1
        wait = min(RETRY_AFTER_SECONDS * 2.0 ** (self.failures_in_a_row - 1), self._refresh_seconds)
        self.retry_at = now + wait
        self.failure = (
            f"model selection failed: {outcome!r}; "
            f"{counted(self.failures_in_a_row, 'failure')} in a row, "
            f"tried again in {format_duration(wait)}"
        )
        self._failed = self.failure
        return None

    def hand_over(self, request: RefreshRequest, may_wait: float, *, urgent: bool) -> None:
        """Hand ``request`` over unless one is awaited already.

        An ``urgent`` request (a break) does not wait behind a re-selection
        queued on the load before it (for up to a refresh period when the
        workers are busy): it supersedes it, and the old one is skipped or its
        outcome dropped.
        """
        with self._lock:
            if self._awaited is not None and not (urgent and self._may_wait > 0.0):
                return
            # Awaited before it is handed over: its outcome may come back at once.
            self._awaited, self._may_wait = request, may_wait
        try:
            self._submit(request, partial(self._deliver_for, request), may_wait)
        except BaseException:
            with self._lock:
                if self._awaited is request:
                    self._awaited = None  # not handed over: ask again next time
            raise
