"""kopf handlers: thin glue between the cluster's events and :class:`Evaluator`.

Each PredictiveScaler gets a daemon (kopf's per-object loop) that evaluates it
every `spec.syncPeriod`: kopf timers take a fixed interval, a daemon reads the
live spec on every turn. The evaluation (API calls, Prometheus, the forecast
of the fitted model) runs in a worker thread, never on the event loop; model
selections run in worker processes. Both queue fairly by namespace
(:mod:`.fairness`), so one namespace's backlog is not another's wait, and a
cheap evaluation never waits behind a selection.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import kopf
from aiohttp import web
from prometheus_client import start_http_server

from predictive_scaler.forecasting import RefreshRequest
from predictive_scaler.forecasting.refresh import Delivery, Submit
from predictive_scaler.operator import metrics
from predictive_scaler.operator.cadence import Cadence
from predictive_scaler.operator.conditions import Lateness
from predictive_scaler.operator.fairness import FairQueue
from predictive_scaler.operator.kube import FINALIZER, Kubernetes
from predictive_scaler.operator.leadership import Leadership
from predictive_scaler.operator.rebalancer import Rebalancer
from predictive_scaler.operator.reconcile import Evaluation, Evaluator, EventNote, ObjectRef
from predictive_scaler.operator.resource import GROUP, PLURAL, VERSION, Mode
from predictive_scaler.operator.rivals import HpaClaim, ScalerClaim, TargetClaims
from predictive_scaler.operator.runtime import ObjectRuntime
from predictive_scaler.operator.selection_workers import SelectionWorkers
from predictive_scaler.operator.settings import OperatorSettings
from predictive_scaler.operator.shard import selector_matcher
from predictive_scaler.refs import WorkloadRef
from predictive_scaler.units import parse_duration

DEFAULT_SYNC_SECONDS = 30.0
CRD_CHECK_SECONDS = 5.0


@dataclass
class OperatorState:
    """Shared by every handler through kopf's `memo`."""

    settings: OperatorSettings
    evaluator: Evaluator
    # The operator's own requests beyond an evaluation's (the CRD-deletion check).
    kube: Kubernetes
    # Evaluation threads; their seats are handed out by `evaluations`.
    executor: concurrent.futures.ThreadPoolExecutor
    selection_workers: SelectionWorkers
    # The rebalancer and the CRD check: never holding a seat an evaluation waits for.
    background: concurrent.futures.ThreadPoolExecutor = field(
        default_factory=lambda: concurrent.futures.ThreadPoolExecutor(
            2, thread_name_prefix="background"
        )
    )
    rebalancer: Rebalancer | None = None
    # None: this process always acts. Else it acts only while it holds the Lease.
    leadership: Leadership | None = None
    runtimes: dict[str, ObjectRuntime] = field(default_factory=dict)
    # The status this process wrote last, per object: the watch may not have
    # delivered it yet when the next turn starts, and the decision state must
    # never go back in time.
    written: dict[str, dict[str, Any]] = field(default_factory=dict)
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    # Selections under way: cancelled at shutdown.
    selecting: set[asyncio.Task[Any]] = field(default_factory=set)

    @functools.cached_property
    def evaluations(self) -> FairQueue:
        return FairQueue(
            self.settings.evaluation_workers,
            on_depth=metrics.QUEUED.labels("evaluation").set,
        )

    @functools.cached_property
    def selections(self) -> FairQueue:
        return FairQueue(
            self.selection_workers.processes,
            on_depth=metrics.QUEUED.labels("selection").set,
        )

    @functools.cached_property
    def in_shard(self) -> Callable[[Mapping[str, str] | None], bool]:
        return selector_matcher(self.settings.shard_selector)

    def acting(self) -> bool:
        """False once the Lease is lost: no evaluation or eviction may start after that."""
        return self.leadership is None or self.leadership.leading.is_set()


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
async def stop_rebalancing(memo: kopf.Memo, **_: Any) -> None:
    state: OperatorState = memo["state"]
    tasks = [*state.tasks, *state.selecting]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def _log_note(namespace: str, name: str, note: EventNote) -> None:
    """Write an object's Event to the operator's log too.

    ``kopf.event`` only posts it, so the log said nothing of what the
    operator did (a demo's 34 scale actions left no line in it), and Events
    expire after an hour. A module logger, not the object's: kopf's posts
    what it logs at WARNING as another Event.
    """
    level = logging.WARNING if note.type == "Warning" else logging.INFO
    logging.getLogger(__name__).log(
        level, "[%s/%s] %s: %s", namespace, name, note.reason, note.message
    )


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


TargetKey = WorkloadRef


def _target_key(namespace: str | None, spec: Any) -> WorkloadRef:
    """The workload a spec's scaleTargetRef names, HPA's or ours."""
    target = spec.get("scaleTargetRef") or {}
    return WorkloadRef(namespace or "", str(target.get("kind")), str(target.get("name")))


@kopf.index("autoscaling", "v2", "horizontalpodautoscalers", id="hpa_targets")
def hpa_targets(
    namespace: str | None, name: str, meta: kopf.Meta, spec: kopf.Spec, **_: Any
) -> dict[TargetKey, HpaClaim]:
    """HPAs by their target, so the rival check needs no request per evaluation."""
    return {_target_key(namespace, spec): HpaClaim.of(name, meta.get("ownerReferences") or ())}


@kopf.index(GROUP, VERSION, PLURAL, id="scaler_targets")
def scaler_targets(
    namespace: str | None, name: str, meta: kopf.Meta, spec: kopf.Spec, **_: Any
) -> dict[TargetKey, ScalerClaim]:
    """PredictiveScalers by their target, every shard's (the index has no shard filter)."""
    claim = ScalerClaim(
        created=str(meta.get("creationTimestamp", "")),
        name=name,
        acts=(spec.get("scaling") or {}).get("mode") != Mode.DRY_RUN.value,
        deleting=meta.get("deletionTimestamp") is not None,
    )
    return {_target_key(namespace, spec): claim}


def _claims(indexes: Mapping[str, Any], namespace: str, spec: kopf.Spec) -> TargetClaims:
    key = _target_key(namespace, spec)
    hpas: kopf.Index[TargetKey, HpaClaim] = indexes["hpa_targets"]
    scalers: kopf.Index[TargetKey, ScalerClaim] = indexes["scaler_targets"]
    return TargetClaims.of(hpas.get(key, ()), scalers.get(key, ()))


def _evaluate_and_write(  # noqa: PLR0917 - run_in_executor passes arguments by position
    state: OperatorState,
    ref: ObjectRef,
    spec: dict[str, Any],
    status: dict[str, Any],
    uid: str,
    claims: TargetClaims,
    lateness: Lateness,
) -> Evaluation | None:
    if not state.acting():
        return None
    runtime = state.runtimes[uid]
    evaluation = state.evaluator.evaluate(
        ref, spec, status, runtime, time.time(), claims=claims, lateness=lateness
    )
    state.evaluator.kube.patch_status(ref.namespace, ref.name, evaluation.status)
    state.written[uid] = {**status, **evaluation.status}
    return evaluation


async def _select(  # noqa: PLR0917 - the submitter's closure passes them through
    state: OperatorState,
    namespace: str,
    uid: str,
    request: RefreshRequest,
    deliver: Delivery,
    wake: asyncio.Event,
    due_at: float,
) -> None:
    """One model selection, in a worker process once a selection seat is fairly ours.

    Before ``due_at`` (monotonic clock) it takes only a seat no due selection waits for.
    """
    task = asyncio.current_task()
    assert task is not None
    state.selecting.add(task)
    task.add_done_callback(state.selecting.discard)
    try:
        async with state.selections.seat(namespace, uid, due_at=due_at) as waited:
            runtime = state.runtimes.get(uid)
            if runtime is None or not runtime.wants(request):
                # The object's loop ended (deleted, or moved to another shard),
                # or a later selection superseded this one (a break, new
                # settings) while this waited: its outcome would be thrown
                # away, and it would hold a worker that others wait for.
                return
            metrics.QUEUE_WAIT.labels("selection").observe(waited)
            outcome = await state.selection_workers.select(request)
    except Exception as error:  # noqa: BLE001 - the object keeps its model and retries
        metrics.RECONCILE_ERRORS.labels("selection").inc()
        logging.getLogger(__name__).warning("model selection failed: %r", error)
        deliver(error)
    else:
        metrics.SELECTION_CPU_SECONDS.observe(outcome.cpu_seconds)
        if outcome.over_budget:
            metrics.SELECTIONS_OVER_BUDGET.inc()
        deliver(outcome)
    # Evaluate now: the first forecast (or the new model) should not wait a syncPeriod.
    wake.set()


def _submitter(state: OperatorState, namespace: str, uid: str, wake: asyncio.Event) -> Submit:
    """Hands selections from an evaluation thread to the event loop's selection queue."""
    loop = asyncio.get_running_loop()

    def submit(request: RefreshRequest, deliver: Delivery, may_wait: float) -> None:
        due_at = time.monotonic() + may_wait
        asyncio.run_coroutine_threadsafe(
            _select(state, namespace, uid, request, deliver, wake, due_at), loop
        )

    return submit


async def _rest(
    stopped: kopf.DaemonStopped, wake: asyncio.Event, cadence: Cadence, period: float
) -> None:
    """Until the next turn is due, the object is deleted, or a new model is worth a turn."""
    while (seconds := cadence.due - time.monotonic()) > 0:
        woken = asyncio.ensure_future(wake.wait())
        stop = asyncio.ensure_future(stopped.wait(seconds))
        try:
            await asyncio.wait({woken, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            woken.cancel()
            stop.cancel()
        if stopped or not wake.is_set():
            break
        wake.clear()
        if cadence.takes_wake(time.monotonic(), period):
            return
    wake.clear()


def _in_shard(labels: kopf.Labels, memo: kopf.Memo, **_: Any) -> bool:
    """kopf filters on every event, so a relabelled object stops here and starts in its new shard.

    (A server-side label selector would save memory, but kopf only forgets an
    object that leaves the selection and its daemon would carry on.)
    """
    state: OperatorState = memo["state"]
    return state.in_shard(labels)


# A deleted object's loop is asked to stop (the `stopped` flag, which it waits
# on between turns) and given a few seconds to finish a turn under way; only
# then is it cancelled, which kopf reports as a warning.
@kopf.daemon(
    GROUP,
    VERSION,
    PLURAL,
    id="evaluate",
    cancellation_backoff=5.0,
    cancellation_timeout=10.0,
    when=_in_shard,
)
async def evaluate(
    *,
    body: kopf.Body,
    meta: kopf.Meta,
    spec: kopf.Spec,
    status: kopf.Status,
    stopped: kopf.DaemonStopped,
    memo: kopf.Memo,
    logger: kopf.Logger,
    **indexes: Any,
) -> None:
    state: OperatorState = memo["state"]
    uid, namespace, name = str(meta["uid"]), str(meta["namespace"]), str(meta["name"])
    loop = asyncio.get_running_loop()
    wake = asyncio.Event()
    token = metrics.start_object(namespace, name)
    state.runtimes[uid] = ObjectRuntime(
        submit=_submitter(state, namespace, uid, wake),
        selection_budget=state.settings.selection_budget,
        metrics_token=token,
    )
    cadence = Cadence(due=time.monotonic())
    try:
        while not stopped:
            period = _sync_seconds(spec)
            ref = ObjectRef(
                namespace=namespace,
                name=name,
                generation=int(meta.get("generation", 0)),
                created=str(meta.get("creationTimestamp", "")),
            )
            began = time.monotonic()
            try:
                # A turn a new model woke early is not due yet: until it is,
                # it yields its seat to turns that are (see .fairness).
                async with state.evaluations.seat(namespace, uid, due_at=cadence.due) as waited:
                    if stopped:
                        # Deleted (or the operator stopping) while the turn waited
                        # for its seat: a turn now would scale a workload that no
                        # scaler owns any more.
                        break
                    began = time.monotonic()
                    metrics.QUEUE_WAIT.labels("evaluation").observe(waited)
                    lateness = cadence.started(began, waited, period)
                    metrics.LATENESS.labels(namespace, name).set(lateness.seconds)
                    evaluation = await loop.run_in_executor(
                        state.executor,
                        _evaluate_and_write,
                        state,
                        ref,
                        dict(spec),
                        _newest_status(state, uid, dict(status)),
                        uid,
                        _claims(indexes, namespace, spec),
                        lateness,
                    )
            except Exception as error:  # noqa: BLE001 - one bad turn must not end the loop
                metrics.RECONCILE_ERRORS.labels("evaluate").inc()
                logger.warning(f"evaluation failed, retrying next period: {error!r}")
            else:
                for note in evaluation.events if evaluation else ():
                    kopf.event(body, type=note.type, reason=note.reason, message=note.message)
                    _log_note(namespace, name, note)
            finally:
                cadence.last_duration = time.monotonic() - began
                metrics.RECONCILE_SECONDS.observe(cadence.last_duration)
            cadence.finished(began, period)
            await _rest(stopped, wake, cadence, period)
    finally:
        state.runtimes.pop(uid, None)
        state.written.pop(uid, None)
        state.evaluations.forget(namespace, uid)
        state.selections.forget(namespace, uid)
        metrics.forget(namespace, name, token)
