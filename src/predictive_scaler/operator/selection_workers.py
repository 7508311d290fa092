"""Model selections in worker processes, so they use every core the operator may use.

statsmodels' fits are Python and numpy under the GIL: in threads, every
selection of every object would share one core with the evaluations. In
processes they run beside them, one per core of the CPU limit, niced below
the operator's own process.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool

from predictive_scaler.forecasting import Refreshed, RefreshRequest, refresh_model
from predictive_scaler.forecasting.refresh_job import DEFAULT_SELECTION_BUDGET_SECONDS
from predictive_scaler.units import format_duration

# Selections yield the CPU to the operator's own process: an evaluation late by
# a second is a late decision, a selection late by a second is nothing.
WORKER_NICENESS = 10


# How often a worker checks that the operator that started it is still there.
ORPHAN_CHECK_SECONDS = 1.0
# A selection still running this many times its CPU budget after it started is
# stuck, not slow: the budget ends its scoring, the dearest measured took 3.6 s
# of CPU, and the margin covers a niced worker on a saturated machine. A
# library routine spinning on a degenerate input (ARIMA's covariance step on a
# load of 1e-6, before loads were brought to a usual magnitude) would
# otherwise hold its worker, and a selection seat with it, for good.
STUCK_AFTER_BUDGETS = 60.0


class SelectionStuckError(RuntimeError):
    """A selection did not return in time; its workers were stopped and replaced."""


def _exit_when_orphaned(parent: int) -> None:
    # A pool's workers hold both ends of its task queue, so an operator that
    # dies without shutting the pool down (SIGKILL, an OOM kill) leaves them
    # waiting forever; re-parented, they leave.
    while os.getppid() == parent:
        time.sleep(ORPHAN_CHECK_SECONDS)
    os._exit(0)


def _prepare_worker(operator: int) -> None:
    # Ctrl-C, and a SIGTERM sent to the process group, reach the workers too; the
    # operator stops them itself, and a worker killed first would read as a crash.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    os.nice(WORKER_NICENESS)
    threading.Thread(
        target=_exit_when_orphaned, args=(operator,), name="orphan-check", daemon=True
    ).start()


def _resident_bytes(pid: int) -> float:
    # The reading prometheus_client makes of the operator's own /proc entry, made of a
    # worker's; nothing where there is no /proc or the worker has just gone.
    from prometheus_client import ProcessCollector  # noqa: PLC0415 - see SelectionWorkers

    collector = ProcessCollector(pid=lambda: pid, registry=None)
    return sum(
        sample.value
        for family in collector.collect()
        for sample in family.samples
        if sample.name == "process_resident_memory_bytes"
    )


class SelectionWorkers:
    """A process pool that replaces itself when a worker dies (an OOM kill, a segfault)."""

    def __init__(
        self,
        processes: int,
        *,
        budget_seconds: float = DEFAULT_SELECTION_BUDGET_SECONDS,
        work: Callable[[RefreshRequest], Refreshed] = refresh_model,
    ) -> None:
        self.processes = processes
        # Wall seconds a selection may run before it counts as stuck.
        self.stuck_after = STUCK_AFTER_BUDGETS * budget_seconds
        self.work = work
        self._pool = self._start()
        # Imported here, not with the module: every worker imports this module (its
        # initializer lives here), and the metrics would cost each of them 11 MB.
        from predictive_scaler.operator.metrics import SELECTION_WORKERS_MEMORY  # noqa: PLC0415

        SELECTION_WORKERS_MEMORY.set_function(self.resident_memory_bytes)

    def _start(self) -> concurrent.futures.ProcessPoolExecutor:
        # spawn, not fork: the operator's threads (kopf, the Lease, the
        # evaluations) hold locks a forked child would inherit held.
        return concurrent.futures.ProcessPoolExecutor(
            self.processes,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_prepare_worker,
            # The operator's pid from the operator: a worker still starting when
            # the operator died must not take its new parent for it.
            initargs=(os.getpid(),),
        )

    async def select(self, request: RefreshRequest) -> Refreshed:
        pool = self._pool
        running = asyncio.get_running_loop().run_in_executor(pool, self.work, request)
        try:
            return await asyncio.wait_for(running, self.stuck_after)
        except TimeoutError:
            # A process pool cannot cancel a running call: its workers go (read
            # from the pool, which has no public handle on them; one already
            # replaced has let go of them), and the selections beside it fail
            # and are asked for again.
            for process in list((pool._processes or {}).values()):
                process.kill()
            self._replace(pool, "a selection did not return; stopping its workers")
            raise SelectionStuckError(
                f"model selection did not return within {format_duration(self.stuck_after)}; "
                "its worker was stopped"
            ) from None
        except BrokenProcessPool:
            self._replace(pool, "a selection worker died; starting new ones")
            raise

    def _replace(self, pool: concurrent.futures.ProcessPoolExecutor, why: str) -> None:
        if pool is self._pool:
            logging.getLogger(__name__).warning(why)
            self._pool = self._start()
            pool.shutdown(wait=False, cancel_futures=True)

    def resident_memory_bytes(self) -> float:
        """The live workers' resident memory together, read when Prometheus scrapes."""
        processes = list((self._pool._processes or {}).values())
        return sum(_resident_bytes(process.pid) for process in processes if process.pid)

    def shutdown(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
