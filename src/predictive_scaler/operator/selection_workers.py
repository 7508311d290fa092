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
from concurrent.futures.process import BrokenProcessPool

from predictive_scaler.forecasting import Refreshed, RefreshRequest, refresh_model

# Selections yield the CPU to the operator's own process: an evaluation late by
# a second is a late decision, a selection late by a second is nothing.
WORKER_NICENESS = 10


# How often a worker checks that the operator that started it is still there.
ORPHAN_CHECK_SECONDS = 1.0


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


class SelectionWorkers:
    """A process pool that replaces itself when a worker dies (an OOM kill, a segfault)."""

    def __init__(self, processes: int) -> None:
        self.processes = processes
        self._pool = self._start()

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
        try:
            return await asyncio.get_running_loop().run_in_executor(pool, refresh_model, request)
        except BrokenProcessPool:
            if pool is self._pool:
                logging.getLogger(__name__).warning("a selection worker died; starting new ones")
                self._pool = self._start()
                pool.shutdown(wait=False, cancel_futures=True)
            raise

    def shutdown(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
