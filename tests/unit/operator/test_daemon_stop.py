"""An object deleted while its evaluation turn, or its model selection, waits for a seat."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import pytest
from kopf._cogs.aiokits.aioenums import FlagSetter, FlagWaiter

from predictive_scaler.forecasting import Refreshed, RefreshRequest
from predictive_scaler.operator import handlers
from predictive_scaler.operator.reconcile import Evaluator
from predictive_scaler.operator.runtime import ObjectRuntime
from predictive_scaler.operator.selection_workers import SelectionWorkers
from tests.unit.operator.test_evaluator import SETTINGS, FakeSource, FakeWorkloads, spec

pytestmark = pytest.mark.unit

# Every wait here is on an event the test itself causes; this only bounds a broken run.
DEADLINE_SECONDS = 30.0
# The daemon as kopf calls it: by keyword, with what it declares (kopf types the
# decorated function as its own protocol, with every keyword kopf passes).
DAEMON = cast("Callable[..., Coroutine[Any, Any, None]]", handlers.evaluate)


async def _poll(what: str, done: Any) -> None:
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {DEADLINE_SECONDS}s: {what}")
        await asyncio.sleep(0.01)


def test_a_turn_granted_its_seat_after_the_object_was_deleted_does_nothing() -> None:
    """Deleting a PredictiveScaler must stop it scaling: a queued turn may not run after."""
    workloads = FakeWorkloads()
    state = handlers.OperatorState(
        settings=SETTINGS,
        evaluator=Evaluator(workloads, FakeSource(level=2.0), SETTINGS),
        kube=None,  # type: ignore[arg-type]  # the turn under test never reaches it
        executor=concurrent.futures.ThreadPoolExecutor(1),
        selection_workers=SelectionWorkers(1),
    )
    stopping: FlagSetter[Any] = FlagSetter()

    async def scenario() -> None:
        release = asyncio.Event()
        seated = 0

        async def busy(member: str) -> None:
            nonlocal seated
            async with state.evaluations.seat("other", member):
                seated += 1
                await release.wait()

        seats = SETTINGS.evaluation_workers
        holders = [asyncio.create_task(busy(str(i))) for i in range(seats)]
        await _poll("every seat taken", lambda: seated == seats)
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
        await asyncio.wait_for(daemon, DEADLINE_SECONDS)
        await asyncio.gather(*holders)

    try:
        asyncio.run(scenario())
    finally:
        state.executor.shutdown()
        state.selection_workers.shutdown()

    assert workloads.statuses == []
    assert workloads.scaled == []
    assert "u1" not in state.runtimes


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


def test_a_selection_seated_after_its_object_is_gone_is_not_run() -> None:
    """Objects deleted at once must not leave their queued selections to hold the workers."""
    workers = CountingWorkers()
    state = handlers.OperatorState(
        settings=SETTINGS,
        evaluator=Evaluator(FakeWorkloads(), FakeSource(), SETTINGS),
        kube=None,  # type: ignore[arg-type]  # never reached
        executor=concurrent.futures.ThreadPoolExecutor(1),
        selection_workers=cast("SelectionWorkers", workers),
    )
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
        release, seated = asyncio.Event(), asyncio.Event()

        async def busy() -> None:
            async with state.selections.seat("other", "x"):
                seated.set()
                await release.wait()

        holder = asyncio.create_task(busy())
        await seated.wait()
        state.runtimes["gone"] = ObjectRuntime()
        state.runtimes["live"] = ObjectRuntime()
        wake = asyncio.Event()
        selections = [
            asyncio.create_task(
                handlers._select(state, "shop", uid, request, delivered.append, wake, 0.0)
            )
            for uid in ("gone", "live")
        ]
        await _poll("both selections queued", lambda: state.selections.depth == 2)
        del state.runtimes["gone"]
        release.set()
        await asyncio.wait_for(asyncio.gather(*selections, holder), DEADLINE_SECONDS)

    try:
        asyncio.run(scenario())
    finally:
        state.executor.shutdown()

    assert len(workers.asked) == 1, "only the live object's selection ran"
    assert len(delivered) == 1
