"""Selection workers are real processes: they select, and they do not outlive the operator."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import numpy as np
import pytest
from prometheus_client import REGISTRY

from predictive_scaler.forecasting import Refreshed, RefreshRequest, refresh_model
from predictive_scaler.operator.selection_workers import (
    ORPHAN_CHECK_SECONDS,
    SelectionStuckError,
    SelectionWorkers,
)
from predictive_scaler_dev.localcluster.waiting import wait_until
from tests.conftest import seasonal_load

# A stand-in operator: starts two workers, has them select once, prints their pids, waits.
OPERATOR = """
import asyncio, sys
import numpy as np
from predictive_scaler.forecasting import RefreshRequest
from predictive_scaler_dev.localcluster.waiting import wait_until
from predictive_scaler.operator.selection_workers import SelectionWorkers

async def main():
    workers = SelectionWorkers(2)
    series = np.linspace(1.0, 2.0, 60)
    request = RefreshRequest("holt", None, None, None, series, np.arange(61.0), 3, 0.0)
    await asyncio.gather(workers.select(request), workers.select(request))
    print(" ".join(str(p) for p in workers._pool._processes), flush=True)
    await asyncio.sleep(3600)

asyncio.run(main())
"""


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def test_a_worker_selects_in_another_process() -> None:
    series = seasonal_load(200)
    times = np.arange(series.size + 5, dtype=np.float64)
    request = RefreshRequest("auto", ("naive", "holt"), None, None, series, times, 5, 1e6)

    async def select() -> tuple[float, str]:
        workers = SelectionWorkers(1)
        try:
            outcome = await workers.select(request)
        finally:
            workers.shutdown()
        return outcome.selected_at, outcome.pathways[0].fitted.predict(5, 0.9).model

    selected_at, model = asyncio.run(select())

    assert selected_at == 1e6
    assert model in {"naive", "holt", "auto"}


def test_the_workers_memory_is_exported_beside_the_operators_own() -> None:
    # process_resident_memory_bytes reads the operator's process alone; a worker holds
    # statsmodels, numpy and scikit-learn, so its memory is most of the operator's.
    async def memory_with_a_worker() -> tuple[float, float]:
        workers = SelectionWorkers(1)
        try:
            await workers.select(FINE)
            exported = REGISTRY.get_sample_value(
                "predictive_scaler_selection_workers_resident_memory_bytes"
            )
            assert exported is not None
            return workers.resident_memory_bytes(), exported
        finally:
            workers.shutdown()

    measured, exported = asyncio.run(memory_with_a_worker())

    assert measured > 20 * 2**20, "a worker that imported the forecasting library"
    assert exported > 20 * 2**20


def test_workers_leave_when_their_operator_is_killed() -> None:
    operator = subprocess.Popen(
        [sys.executable, "-c", OPERATOR],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    try:
        assert operator.stdout is not None
        workers = [int(pid) for pid in operator.stdout.readline().split()]
        assert len(workers) == 2
        assert all(alive(pid) for pid in workers)
        operator.send_signal(signal.SIGKILL)
        operator.wait()
        # They look once per ORPHAN_CHECK_SECONDS; a loaded machine may be slow to run them.
        wait_until(
            lambda: not any(alive(pid) for pid in workers),
            timeout=30 * ORPHAN_CHECK_SECONDS,
            what="the orphaned selection workers to leave",
        )
    finally:
        operator.kill()
        operator.wait()


def test_a_sigterm_to_the_process_group_leaves_the_workers_to_the_operator() -> None:
    """Stopping a process group must not read as a crashed worker while the operator stops."""
    series = seasonal_load(120)
    request = RefreshRequest("naive", None, None, None, series, np.arange(series.size + 3.0), 3, 0)

    async def select_after_sigterm() -> str:
        workers = SelectionWorkers(1)
        try:
            await workers.select(request)
            (worker,) = workers._pool._processes
            os.kill(worker, signal.SIGTERM)
            # The same worker, still there, selects again: no BrokenProcessPool.
            outcome = await workers.select(request)
            assert alive(worker)
            assert set(workers._pool._processes) == {worker}
        finally:
            workers.shutdown()
        return outcome.pathways[0].fitted.predict(3, 0.9).model

    assert asyncio.run(select_after_sigterm()) == "naive"


def stuck_on_naive(request: RefreshRequest) -> Refreshed:
    """Selects, except a `naive` request: that one never returns, as a spinning LAPACK call."""
    if request.model == "naive":
        threading.Event().wait()
    return refresh_model(request)


def _request(model: str) -> RefreshRequest:
    series = seasonal_load(120)
    return RefreshRequest(model, None, None, None, series, np.arange(series.size + 3.0), 3, 0)


STUCK, FINE = _request("naive"), _request("holt")


def stuck_after_a_second(processes: int) -> SelectionWorkers:
    """Workers that hang on STUCK; the 1 s limit bounds a call that never ends, it races nothing."""
    workers = SelectionWorkers(processes, work=stuck_on_naive)
    workers.stuck_after = 1.0
    return workers


async def model_selected_next(workers: SelectionWorkers) -> str:
    """What the workers select for FINE, with room to do it."""
    workers.stuck_after = 600.0
    return (await workers.select(FINE)).pathways[0].fitted.predict(3, 0.9).model


def test_a_selection_that_never_returns_is_stopped_and_its_worker_replaced() -> None:
    async def stuck_then_fine() -> tuple[list[int], str]:
        workers = stuck_after_a_second(1)
        try:
            first = workers._pool
            selecting = asyncio.ensure_future(workers.select(STUCK))
            deadline = time.monotonic() + 60.0
            while not first._processes and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            stopped = list(first._processes)
            with pytest.raises(SelectionStuckError, match="did not return within 1s"):
                await selecting
            assert workers._pool is not first
            model = await model_selected_next(workers)
        finally:
            workers.shutdown()
        return stopped, model

    stopped, model = asyncio.run(stuck_then_fine())

    assert model == "holt"
    assert stopped
    # Killed, then reaped by the pool's manager thread; a loaded machine may be slow to.
    wait_until(
        lambda: not any(alive(pid) for pid in stopped),
        timeout=30.0,
        what="the stuck worker gone",
    )


def test_two_selections_stuck_at_once_both_fail_and_the_workers_serve_again() -> None:
    async def both_stuck_then_fine() -> tuple[tuple[Refreshed | BaseException, ...], str]:
        workers = stuck_after_a_second(2)
        try:
            failures = await asyncio.gather(
                workers.select(STUCK), workers.select(STUCK), return_exceptions=True
            )
            model = await model_selected_next(workers)
        finally:
            workers.shutdown()
        return failures, model

    failures, model = asyncio.run(both_stuck_then_fine())

    # The first past its limit stops the workers; the other fails with them or on its own limit.
    assert all(isinstance(f, SelectionStuckError | BrokenProcessPool) for f in failures), failures
    assert any(isinstance(f, SelectionStuckError) for f in failures)
    assert model == "holt"


def test_a_worker_does_not_import_the_operators_metrics() -> None:
    # Every worker imports this module for its initializer; the metrics (and pydantic and
    # prometheus_client with them) cost each worker 11 MB it never uses.
    script = (
        "import sys, predictive_scaler.operator.selection_workers\n"
        "print('predictive_scaler.operator.metrics' in sys.modules)\n"
    )
    shown = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert shown == "False"
