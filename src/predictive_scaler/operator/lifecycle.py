"""kopf's process-wide handlers: start-up (leadership, metrics, the background loops) and cleanup.

The per-object handlers are in :mod:`.handlers`; both modules register with
kopf when imported (see ``predictive_scaler.cli.run``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import kopf
from aiohttp import web
from prometheus_client import start_http_server

from predictive_scaler.operator import metrics
from predictive_scaler.operator.kube import FINALIZER
from predictive_scaler.operator.leadership import Leadership
from predictive_scaler.operator.resource import GROUP
from predictive_scaler.operator.settings import OperatorSettings
from predictive_scaler.operator.state import OperatorState

CRD_CHECK_SECONDS = 5.0


@kopf.on.startup()
async def configure(settings: kopf.OperatorSettings, memo: kopf.Memo, **_: Any) -> None:
    state: OperatorState = memo["state"]
    settings.persistence.finalizer = FINALIZER
    settings.persistence.progress_storage = kopf.AnnotationsProgressStorage(prefix=GROUP)
    settings.persistence.diffbase_storage = kopf.AnnotationsDiffBaseStorage(
        prefix=GROUP, key="last-handled-configuration"
    )
    # Re-list now and then even when the connection looks healthy, and never
    # hang forever on a silent one.
    settings.watching.server_timeout = 300
    settings.watching.client_timeout = 330
    settings.watching.connect_timeout = 30
    # Our Events say what happened; kopf's per-handler log Events would be noise.
    settings.posting.level = logging.WARNING
    start_http_server(state.settings.metrics_port, addr=state.settings.bind_address)
    metrics.LEADER.set(0)
    if state.leadership is not None:
        # kopf starts no watch before its start-up handlers return: a standby
        # waits here, watching nothing and acting on nothing.
        await _stand_by(state.leadership, state.settings)
    metrics.LEADER.set(1)
    if state.rebalancer is not None:
        state.tasks.append(asyncio.create_task(_rebalance_forever(state), name="rebalance"))
    state.tasks.append(asyncio.create_task(_release_on_crd_deletion(state), name="crd-watch"))


@kopf.on.cleanup()
async def stop_background_tasks(memo: kopf.Memo, **_: Any) -> None:
    state: OperatorState = memo["state"]
    tasks = [*state.tasks, *state.selecting]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def _stand_by(leadership: Leadership, settings: OperatorSettings) -> None:
    """Serve the liveness endpoint (kopf's starts later) until this process holds the Lease."""
    log = logging.getLogger(__name__)
    log.info("standing by until Lease %s is ours", leadership.lease)

    async def healthy(_: web.Request) -> web.Response:
        return web.json_response({"standby": True})

    app = web.Application()
    app.add_routes([web.get("/healthz", healthy)])
    runner = web.AppRunner(app, handle_signals=False)
    await runner.setup()
    await web.TCPSite(runner, settings.bind_address, settings.liveness_port).start()
    try:
        # Short waits on the election thread's event, so a shutdown is not held up.
        while not await asyncio.to_thread(leadership.leading.wait, 1.0):
            pass
    finally:
        await runner.cleanup()
    log.info("holding Lease %s: acting", leadership.lease)


async def _rebalance_forever(state: OperatorState) -> None:
    """One loop per operator (not per object), every PREDICTIVE_SCALER_REBALANCE_INTERVAL.

    The first cycle comes one interval after start, not at once: however often
    the operator restarts (or fails over), two cycles are an interval apart,
    so a crash mid-cycle never doubles the eviction budget of an interval.
    """
    assert state.rebalancer is not None
    loop = asyncio.get_running_loop()
    await asyncio.sleep(state.settings.rebalance_interval)
    while True:
        began = time.monotonic()
        try:
            if not state.acting():
                return
            await loop.run_in_executor(state.background, state.rebalancer.cycle, time.time())
        except Exception as error:  # noqa: BLE001 - a failed cycle is retried next interval
            metrics.RECONCILE_ERRORS.labels("rebalance").inc()
            logging.getLogger(__name__).warning("rebalancing cycle failed: %r", error)
        elapsed = time.monotonic() - began
        metrics.REBALANCE_SECONDS.observe(elapsed)
        await asyncio.sleep(max(0.0, state.settings.rebalance_interval - elapsed))


async def _release_on_crd_deletion(state: OperatorState) -> None:
    """Every few seconds: if our CRD is being deleted, let its objects go (see Kubernetes)."""
    loop = asyncio.get_running_loop()
    log = logging.getLogger(__name__)
    kube = state.kube
    while True:
        try:
            released = await loop.run_in_executor(
                state.background,
                kube.release_if_crd_deleted,
                state.settings.namespaces,
                state.settings.shard_selector,
            )
        except Exception as error:  # noqa: BLE001 - the API server may be away; try again
            log.warning("checking the CRD for deletion failed: %r", error)
        else:
            if released:
                log.warning("CRD is being deleted; released %s", ", ".join(released))
        await asyncio.sleep(CRD_CHECK_SECONDS)
