"""kopf handlers: thin glue between the cluster's events and :class:`Evaluator`.

Each PredictiveScaler gets a daemon (kopf's per-object loop) that evaluates it
every `spec.syncPeriod`: kopf timers take a fixed interval, a daemon reads the
live spec on every turn. The evaluation (API calls, Prometheus, forecasting)
runs in a worker thread, never on the event loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import time
from dataclasses import dataclass, field
from typing import Any

import kopf
from prometheus_client import start_http_server

from predictive_scaler.operator import metrics
from predictive_scaler.operator.kube import FINALIZER
from predictive_scaler.operator.rebalancer import Rebalancer
from predictive_scaler.operator.reconcile import Evaluation, Evaluator, ObjectRef
from predictive_scaler.operator.resource import GROUP, PLURAL, VERSION
from predictive_scaler.operator.runtime import ObjectRuntime
from predictive_scaler.operator.settings import OperatorSettings
from predictive_scaler.units import parse_duration

DEFAULT_SYNC_SECONDS = 30.0
CRD_CHECK_SECONDS = 5.0


@dataclass
class OperatorState:
    """Shared by every handler through kopf's `memo`."""

    settings: OperatorSettings
    evaluator: Evaluator
    executor: concurrent.futures.ThreadPoolExecutor
    rebalancer: Rebalancer | None = None
    runtimes: dict[str, ObjectRuntime] = field(default_factory=dict)
    # The status this process wrote last, per object: the watch may not have
    # delivered it yet when the next turn starts, and the decision state must
    # never go back in time.
    written: dict[str, dict[str, Any]] = field(default_factory=dict)
    tasks: list[asyncio.Task[None]] = field(default_factory=list)


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
    if state.rebalancer is not None:
        state.tasks.append(asyncio.create_task(_rebalance_forever(state), name="rebalance"))
    state.tasks.append(asyncio.create_task(_release_on_crd_deletion(state), name="crd-watch"))


@kopf.on.cleanup()
async def stop_rebalancing(memo: kopf.Memo, **_: Any) -> None:
    state: OperatorState = memo["state"]
    for task in state.tasks:
        task.cancel()
    await asyncio.gather(*state.tasks, return_exceptions=True)


async def _rebalance_forever(state: OperatorState) -> None:
    """One loop per operator (not per object), every PREDICTIVE_SCALER_REBALANCE_INTERVAL."""
    assert state.rebalancer is not None
    loop = asyncio.get_running_loop()
    while True:
        began = time.monotonic()
        try:
            await loop.run_in_executor(state.executor, state.rebalancer.cycle, time.time())
        except Exception as error:  # noqa: BLE001 - a failed cycle is retried next interval
            metrics.RECONCILE_ERRORS.labels("rebalance").inc()
            logging.getLogger(__name__).warning("rebalancing cycle failed: %r", error)
        elapsed = time.monotonic() - began
        await asyncio.sleep(max(0.0, state.settings.rebalance_interval - elapsed))


async def _release_on_crd_deletion(state: OperatorState) -> None:
    """Every few seconds: if our CRD is being deleted, let its objects go (see Kubernetes)."""
    loop = asyncio.get_running_loop()
    log = logging.getLogger(__name__)
    kube = state.evaluator.kube
    while True:
        try:
            released = await loop.run_in_executor(
                state.executor, kube.release_if_crd_deleted, state.settings.namespaces
            )
        except Exception as error:  # noqa: BLE001 - the API server may be away; try again
            log.warning("checking the CRD for deletion failed: %r", error)
        else:
            if released:
                log.warning("CRD is being deleted; released %s", ", ".join(released))
        await asyncio.sleep(CRD_CHECK_SECONDS)


def _sync_seconds(spec: Any) -> float:
    try:
        return parse_duration(str(spec.get("syncPeriod", "30s")))
    except ValueError:
        return DEFAULT_SYNC_SECONDS


def _newest_status(state: OperatorState, uid: str, live: dict[str, Any]) -> dict[str, Any]:
    written = state.written.get(uid)
    if written is None:
        return live
    return (
        written
        if written.get("lastEvaluationTime", "") > live.get("lastEvaluationTime", "")
        else live
    )


def _evaluate_and_write(
    state: OperatorState, ref: ObjectRef, spec: dict[str, Any], status: dict[str, Any], uid: str
) -> Evaluation:
    runtime = state.runtimes.setdefault(uid, ObjectRuntime())
    evaluation = state.evaluator.evaluate(ref, spec, status, runtime, time.time())
    state.evaluator.kube.patch_status(ref.namespace, ref.name, evaluation.status)
    state.written[uid] = {**status, **evaluation.status}
    return evaluation


@kopf.daemon(GROUP, VERSION, PLURAL, id="evaluate", cancellation_timeout=10.0)
async def evaluate(
    *,
    body: kopf.Body,
    meta: kopf.Meta,
    spec: kopf.Spec,
    status: kopf.Status,
    stopped: kopf.DaemonStopped,
    memo: kopf.Memo,
    logger: kopf.Logger,
    **_: Any,
) -> None:
    state: OperatorState = memo["state"]
    uid = str(meta["uid"])
    loop = asyncio.get_running_loop()
    metrics.start_object(str(meta["namespace"]), str(meta["name"]))
    try:
        while not stopped:
            began = time.monotonic()
            ref = ObjectRef(
                namespace=str(meta["namespace"]),
                name=str(meta["name"]),
                generation=int(meta.get("generation", 0)),
                created=str(meta.get("creationTimestamp", "")),
            )
            try:
                evaluation = await loop.run_in_executor(
                    state.executor,
                    _evaluate_and_write,
                    state,
                    ref,
                    dict(spec),
                    _newest_status(state, uid, dict(status)),
                    uid,
                )
            except Exception as error:  # noqa: BLE001 - one bad turn must not end the loop
                metrics.RECONCILE_ERRORS.labels("evaluate").inc()
                logger.warning(f"evaluation failed, retrying next period: {error!r}")
            else:
                for note in evaluation.events:
                    kopf.event(body, type=note.type, reason=note.reason, message=note.message)
            finally:
                metrics.RECONCILE_SECONDS.observe(time.monotonic() - began)
            elapsed = time.monotonic() - began
            await stopped.wait(max(0.0, _sync_seconds(spec) - elapsed))
    finally:
        state.runtimes.pop(uid, None)
        state.written.pop(uid, None)
        metrics.forget(str(meta["namespace"]), str(meta["name"]))
