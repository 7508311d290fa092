"""Fair queuing of work for a fixed number of seats: across namespaces, then by due time.

What is taken from Kubernetes' API Priority and Fairness (KEP-1040):

- **Flows and fair queuing.** Each namespace is a flow with its own queue.
  A free seat goes to the flow that has been served least, in seat-seconds;
  within it, to the work that has been due longest (APF serves a flow's
  queue in arrival order; a due time is what arrival means for a turn kept
  on a schedule). So a namespace that queues a hundred evaluations waits
  behind itself, and another namespace's next evaluation waits at most for
  one seat to free.
- **No fairness by seat-time within a namespace.** Each object queues at
  most one item per queue, so serving a namespace by due time is a round
  of its objects' turns: an expensive object cannot take more than its
  turn from its neighbours. Charging objects their seat-time as well would
  let one expensive turn (a first one reading days of history, a slow
  answer) push the object behind every neighbour until they had used as
  much: in a saturated namespace, dozens of missed turns.
- **Charged at dispatch, corrected at completion.** APF charges a request
  its estimated width at dispatch and adjusts to what it really took once
  it finishes; here the estimate is the object's last duration.
- **No banked credit.** A flow that was idle joins at the least charge
  among those now competing (the virtual time of start-time fair queuing,
  Goyal et al. 1996): being quiet for an hour buys no burst that would
  starve the others.
- **Bounded seats.** The seats are the workers behind the queue (threads
  for evaluations, processes for selections); kopf's own concurrency is
  per object (one daemon each), so the bound has to be here.
- **Two levels of priority.** Work that is due goes before work that only
  may run early (an object's turn woken by a new model, its next turn
  still a while away): early work takes a seat only when no due work is
  waiting, and becomes due work itself at its due time. APF's levels keep
  one kind of request from taking the seats another needs; here they keep
  a wave of early turns (every object's first model lands within minutes
  of a start) from making due turns late. Among selections, a first one
  is due (its object has no forecast until it lands) and a re-selection
  may run early for one refresh period (the model in place forecasts
  meanwhile), so a tenant re-selecting often does not hold back other
  objects' first forecasts.

Not taken: shuffle sharding (a queue per namespace is cheap, no hashing
onto a fixed set is needed), separate seats per level (evaluations and
selections already have their own queues and seats), and rejection of
queued work (each object queues at most one item per queue).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field


@dataclass
class _Waiter:
    flow: str
    member: str
    order: int
    enqueued: float
    # Clock time from which the work is due; before it, it may only run early.
    due_at: float
    granted: asyncio.Future[None] = field(repr=False)
    estimate: float = 0.0


class _Charges:
    """Seat-seconds charged per key, and the keys now competing."""

    def __init__(self) -> None:
        self.charged: dict[str, float] = {}
        # Estimates charged for work still running, settled when it ends.
        self.pending: dict[str, float] = {}
        self.active: dict[str, int] = {}  # key -> items queued or running
        self._floor = 0.0

    def _settled(self, key: str) -> float:
        return self.charged[key] - self.pending.get(key, 0.0)

    def join(self, key: str) -> None:
        if self.active.get(key, 0) == 0:
            # The virtual time: the least served of those competing, by work
            # done (an estimate for running work may be far off either way).
            competing = [self._settled(k) for k, n in self.active.items() if n and k != key]
            floor = min(competing, default=self._floor)
            self.charged[key] = max(self.charged.get(key, floor), floor)
        self.active[key] = self.active.get(key, 0) + 1

    def leave(self, key: str) -> None:
        self.active[key] -= 1
        if self.active[key] == 0:
            del self.active[key]
            # Where the least served of those still competing stands (or the
            # one that just left, when none is), never going back.
            still = [self._settled(k) for k in self.active]
            self._floor = max(self._floor, min(still, default=self._settled(key)))

    def estimate(self, key: str, seconds: float) -> None:
        self.charged[key] += seconds
        self.pending[key] = self.pending.get(key, 0.0) + seconds

    def settle(self, key: str, estimated: float, took: float) -> None:
        self.charged[key] += took - estimated
        # Several items of one key may run at once, each with its own estimate.
        left = self.pending.get(key, 0.0) - estimated
        if left > 0.0:
            self.pending[key] = left
        else:
            self.pending.pop(key, None)


class FairQueue:
    """``async with queue.seat(namespace, object)``: run when a seat is fairly yours."""

    def __init__(
        self,
        seats: int,
        *,
        on_depth: Callable[[int], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if seats < 1:
            raise ValueError(f"seats must be >= 1, got {seats}")
        self.seats = seats
        self.busy = 0
        self._waiting: list[_Waiter] = []
        self._flows = _Charges()
        self._estimates: dict[tuple[str, str], float] = {}  # (flow, member) -> last duration
        self._order = itertools.count()
        self._on_depth = on_depth
        self._clock = clock

    @property
    def depth(self) -> int:
        return len(self._waiting)

    @contextlib.asynccontextmanager
    async def seat(
        self, flow: str, member: str, *, due_at: float | None = None
    ) -> AsyncIterator[float]:
        """Wait for a seat, fairly; yields the seconds waited. The seat is freed on exit.

        With ``due_at`` (a time on the queue's clock) the work may run early:
        until then it takes only a seat that no due work is waiting for.
        """
        key = (flow, member)
        now = self._clock()
        waiter = _Waiter(
            flow,
            member,
            next(self._order),
            now,
            now if due_at is None else due_at,
            asyncio.get_running_loop().create_future(),
        )
        self._flows.join(flow)
        self._waiting.append(waiter)
        self._dispatch()
        try:
            await waiter.granted
        except asyncio.CancelledError:
            if waiter in self._waiting:
                self._waiting.remove(waiter)
                self._flows.leave(flow)
                self._dispatch()
            else:  # granted just as it was cancelled: the seat is ours to give back
                self._finish(flow, key, waiter.estimate, 0.0)
            raise
        began = self._clock()
        try:
            yield began - waiter.enqueued
        finally:
            took = self._clock() - began
            self._finish(flow, key, waiter.estimate, took)

    def forget(self, flow: str, member: str) -> None:
        """Drop what is kept for an object that is gone (its last duration)."""
        self._estimates.pop((flow, member), None)

    def _dispatch(self) -> None:
        # A waiter whose task was cancelled has its future cancelled at once but
        # leaves the queue only when its task next runs: it is passed over, not
        # granted (granting it would raise in whoever freed the seat).
        while self.busy < self.seats and (
            live := [waiter for waiter in self._waiting if not waiter.granted.done()]
        ):
            now = self._clock()
            due = [w for w in live if w.due_at <= now]
            waiter = min(
                due or live,
                key=lambda w: (self._flows.charged[w.flow], w.due_at, w.order),
            )
            self._waiting.remove(waiter)
            estimate = self._estimates.get((waiter.flow, waiter.member), 0.0)
            self._flows.estimate(waiter.flow, estimate)
            waiter.estimate = estimate
            self.busy += 1
            waiter.granted.set_result(None)
        if self._on_depth is not None:
            self._on_depth(len(self._waiting))

    def _finish(self, flow: str, key: tuple[str, str], estimate: float, took: float) -> None:
        try:
            self._flows.settle(flow, estimate, took)
            self._estimates[key] = took
            self._flows.leave(flow)
        finally:
            # Whatever the accounting did, the seat is free: a lost seat is a lost worker.
            self.busy -= 1
            self._dispatch()
