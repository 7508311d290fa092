"""An object deleted while its evaluation turn, or its model selection, waits for a seat."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import pytest
from kopf._cogs.aiokits.aioenums import FlagSetter, FlagWaiter

from predictive_scaler.forecasting import Refreshed, RefreshRequest, ScheduledSelection
from predictive_scaler.operator import handlers
from predictive_scaler.operator.fairness import FairQueue
from predictive_scaler.operator.reconcile import Evaluator
from predictive_scaler.operator.runtime import ObjectRuntime
from predictive_scaler.operator.selection_workers import SelectionWorkers
from predictive_scaler.operator.state import OperatorState
from predictive_scaler.refs import ScalerRef
from tests.unit.operator.test_evaluator import SETTINGS, FakeSource, FakeWorkloads, spec

pytestmark = pytest.mark.unit

# Every wait here is on an event the test itself causes; this only bounds a broken run.
DEADLINE_SECONDS = 30.0
# The daemon as kopf calls it: by keyword, with what it declares (kopf types the
# decorated function as its own protocol, with every keyword kopf passes).
DAEMON = cast("Callable[..., Coroutine[Any, Any, None]]", handlers.evaluate_on_schedule)


async def _poll(what: str, done: Callable[[], bool]) -> None:
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {DEADLINE_SECONDS}s: {what}")
        await asyncio.sleep(0.01)


@dataclass
class CountingWorkers:
    """Selection workers that only count the selections they are given."""

    processes: int = 1
    asked: list[RefreshRequest] = field(default_factory=list)

    async def select(self, request: RefreshRequest) -> Refreshed:
        self.asked.append(request)
        raise RuntimeError("not under test")

    def shutdown(self) -> None:
        pass


def operator_state(workloads: FakeWorkloads, workers: CountingWorkers) -> OperatorState:
    return OperatorState(
        settings=SETTINGS,
        evaluator=Evaluator(workloads, FakeSource(level=2.0), SETTINGS),
        kube=None,  # type: ignore[arg-type]  # what these tests run never reaches it
        executor=concurrent.futures.ThreadPoolExecutor(1),
        selection_workers=cast("SelectionWorkers", workers),
    )


async def hold_every_seat(
    queue: FairQueue, seats: int
) -> tuple[asyncio.Event, asyncio.Future[Any]]:
    """Another namespace takes every seat of ``queue`` until the event is set."""
    release, seated = asyncio.Event(), 0

    async def busy(member: str) -> None:
        nonlocal seated
        async with queue.seat("other", member):
            seated += 1
            await release.wait()

    holders = asyncio.gather(*(busy(str(i)) for i in range(seats)))
    await _poll("every seat taken", lambda: seated == seats)
    return release, holders


def test_a_turn_granted_its_seat_after_the_object_was_deleted_does_nothing() -> None:
    """Deleting a PredictiveScaler must stop it scaling: a queued turn may not run after."""
    workloads = FakeWorkloads()
    state = operator_state(workloads, CountingWorkers())
    stopping: FlagSetter[Any] = FlagSetter()

    async def scenario() -> None:
        release, holders = await hold_every_seat(state.evaluations, SETTINGS.evaluation_workers)
        daemon = asyncio.create_task(
            DAEMON(
                body={},
                meta={"uid": "u1", "namespace": "shop", "name": "web", "generation": 1},
                spec=spec(),
                status={},
                stopped=FlagWaiter(stopping),
                memo={"state": state},
                logger=logging.getLogger("test"),
                hpa_targets={},
                scaler_targets={},
            )
        )
        await _poll("the turn queued", lambda: state.evaluations.depth == 1)
        stopping.set()
        release.set()
        await asyncio.wait_for(asyncio.gather(daemon, holders), DEADLINE_SECONDS)

    try:
        asyncio.run(scenario())
    finally:
        state.executor.shutdown()

    assert workloads.statuses == []
    assert workloads.scaled == []
    assert "u1" not in state.runtimes


def test_a_selection_seated_after_its_object_is_gone_or_it_is_superseded_is_not_run() -> None:
    """Objects deleted at once must not leave their queued selections to hold the workers,
    nor must a selection that a later one replaced (a break, new settings)."""
    workers = CountingWorkers()
    state = operator_state(FakeWorkloads(), workers)
    delivered: list[object] = []
    request = RefreshRequest(
        model="naive",
        candidates=None,
        season_length=None,
        seasonality_seconds=None,
        series=np.ones(10),
        step_times=np.arange(15.0),
        horizon=5,
        now=0.0,
        long=None,
        budget_seconds=None,
    )

    async def scenario() -> None:
        release, holders = await hold_every_seat(state.selections, workers.processes)
        state.runtimes["gone"] = ObjectRuntime()
        state.runtimes["live"] = ObjectRuntime()
        # Its forecaster was rebuilt and never asked for this request.
        state.runtimes["superseded"] = ObjectRuntime(selection=ScheduledSelection("naive"))
        wake = asyncio.Event()
        selections = [
            asyncio.create_task(
                handlers._select(state, "shop", uid, request, delivered.append, wake, 0.0)
            )
            for uid in ("gone", "superseded", "live")
        ]
        await _poll("the selections queued", lambda: state.selections.depth == 3)
        del state.runtimes["gone"]
        release.set()
        await asyncio.wait_for(asyncio.gather(*selections, holders), DEADLINE_SECONDS)

    try:
        asyncio.run(scenario())
    finally:
        state.executor.shutdown()

    assert len(workers.asked) == 1, "only the live object's selection ran"
    assert len(delivered) == 1


@dataclass
class RecordingRanker:
    """Records when the deleted scaler's costs are forgotten."""

    said: list[object]

    def forget(self, scaler: ScalerRef) -> int:
        self.said.append(scaler)
        return 1


def test_a_deleted_scalers_costs_are_forgotten_after_its_last_turn_even_once_cancelled() -> None:
    """kopf cancels a daemon that outlives its backoff: the costs must still go, and only
    after a turn still ranking pods in its thread has finished."""
    said: list[object] = []
    state = operator_state(FakeWorkloads(), CountingWorkers())
    state.ranker = RecordingRanker(said)  # type: ignore[assignment]
    state.background = concurrent.futures.ThreadPoolExecutor(1)
    turns = concurrent.futures.ThreadPoolExecutor(1)
    turn_may_end, background_free = threading.Event(), threading.Event()
    scaler = ScalerRef("shop", "web")

    def last_turn() -> None:
        turn_may_end.wait(DEADLINE_SECONDS)
        said.append("turn ended")

    async def scenario() -> None:
        # The background thread is busy, so the forgetting waits in its queue.
        state.background.submit(background_free.wait, DEADLINE_SECONDS)
        turn = turns.submit(last_turn)
        forgetting = asyncio.create_task(
            handlers._forget_deletion_costs(state, scaler, turn, logging.getLogger("test"))
        )
        await asyncio.sleep(0)  # the task runs to its first await: the job is queued
        forgetting.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await forgetting
        background_free.set()
        turn_may_end.set()
        await _poll("the costs forgotten", lambda: scaler in said)

    try:
        asyncio.run(scenario())
    finally:
        turns.shutdown()
        state.background.shutdown()
        state.executor.shutdown()
    assert said == ["turn ended", scaler]
