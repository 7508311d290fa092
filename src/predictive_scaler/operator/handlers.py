"""kopf's per-object handlers: thin glue between the cluster's events and :class:`Evaluator`.

Each PredictiveScaler gets a daemon (kopf's per-object loop) that evaluates it
every `spec.syncPeriod`: kopf timers take a fixed interval, a daemon reads the
live spec on every turn. The evaluation (API calls, Prometheus, the forecast
of the fitted model) runs in a worker thread, never on the event loop; model
selections run in worker processes. Both queue fairly by namespace
(:mod:`.fairness`), so one namespace's backlog is not another's wait, and a
cheap evaluation never waits behind a selection. The process-wide
handlers (start-up, leadership, the rebalancing loop) are in :mod:`.lifecycle`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import logging
import time
from collections.abc import Mapping
from typing import Any

import kopf

from predictive_scaler.forecasting import RefreshRequest
from predictive_scaler.forecasting.handover import Delivery, Submit
from predictive_scaler.operator import metrics
from predictive_scaler.operator.cadence import Cadence
from predictive_scaler.operator.conditions import Lateness
from predictive_scaler.operator.evaluation import Evaluation, EventNote, ObjectRef
from predictive_scaler.operator.resource import (
    GROUP,
    MAX_SYNC_SECONDS,
    MIN_SYNC_SECONDS,
    PLURAL,
    VERSION,
    Mode,
)
from predictive_scaler.operator.rivals import HpaClaim, ScalerClaim, TargetClaims
from predictive_scaler.operator.runtime import ObjectRuntime
from predictive_scaler.operator.state import OperatorState
from predictive_scaler.refs import ScalerRef, WorkloadRef
from predictive_scaler.units import parse_duration

DEFAULT_SYNC_SECONDS = 30.0


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


def _sync_seconds(spec: Any) -> float:
    """The object's period, read before its spec is validated, within the CRD's bounds.

    An object stored before those rules (or past them) is refused by each
    evaluation with InvalidSpec; it must not be evaluated every few
    milliseconds, nor starved, meanwhile.
    """
    try:
        seconds = parse_duration(str(spec.get("syncPeriod", "30s")))
    except ValueError:
        return DEFAULT_SYNC_SECONDS
    return min(max(seconds, MIN_SYNC_SECONDS), MAX_SYNC_SECONDS)


def _newest_status(state: OperatorState, uid: str, live: dict[str, Any]) -> dict[str, Any]:
    written = state.written.get(uid)
    if written is None:
        return live
    return (
        written
        if written.get("lastEvaluationTime", "") > live.get("lastEvaluationTime", "")
        else live
    )


def _target_key(namespace: str | None, spec: Any) -> WorkloadRef:
    """The workload a spec's scaleTargetRef names, HPA's or ours."""
    target = spec.get("scaleTargetRef") or {}
    return WorkloadRef(namespace or "", str(target.get("kind")), str(target.get("name")))


@kopf.index("autoscaling", "v2", "horizontalpodautoscalers", id="hpa_targets")
def hpa_targets(
    namespace: str | None, name: str, meta: kopf.Meta, spec: kopf.Spec, **_: Any
) -> dict[WorkloadRef, HpaClaim]:
    """HPAs by their target, so the rival check needs no request per evaluation."""
    return {_target_key(namespace, spec): HpaClaim.of(name, meta.get("ownerReferences") or ())}


@kopf.index(GROUP, VERSION, PLURAL, id="scaler_targets")
def scaler_targets(
    namespace: str | None, name: str, meta: kopf.Meta, spec: kopf.Spec, **_: Any
) -> dict[WorkloadRef, ScalerClaim]:
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
    hpas: kopf.Index[WorkloadRef, HpaClaim] = indexes["hpa_targets"]
    scalers: kopf.Index[WorkloadRef, ScalerClaim] = indexes["scaler_targets"]
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


async def _forget_deletion_costs(
    state: OperatorState,
    scaler: ScalerRef,
    turn: concurrent.futures.Future[Any] | None,
    logger: kopf.Logger,
) -> None:
    """Take a deleted scaler's deletion costs off its pods, while kopf's finalizer still holds
    the object (the daemon's stop; an on-delete handler would make kopf store every object's
    spec in an annotation). Best effort: a pod keeping its rank must not keep the object.

    A turn kopf cancelled goes on in its thread and may still be ranking pods: they are
    forgotten once it has finished (within an evaluation's budget). Shielded, so the
    daemon's own cancellation does not stop the forgetting half-way.
    """
    ranker, budget = state.ranker, state.settings.evaluation_budget
    if ranker is None:
        return

    def forget() -> int:
        if turn is not None:
            concurrent.futures.wait([turn], timeout=budget)
        return ranker.forget(scaler)

    job = asyncio.get_running_loop().run_in_executor(state.background, forget)
    job.add_done_callback(functools.partial(_said_forgotten, logger))
    with contextlib.suppress(Exception):  # said by _said_forgotten
        await asyncio.shield(job)


def _said_forgotten(logger: kopf.Logger, job: asyncio.Future[int]) -> None:
    if job.cancelled():
        return
    if (error := job.exception()) is not None:
        logger.warning(f"taking the pods' deletion costs off failed: {error!r}")
    elif forgotten := job.result():
        logger.info(f"took the deletion costs off {forgotten} pod(s)")


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
async def evaluate_on_schedule(
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
    wake = asyncio.Event()
    token = metrics.start_object(namespace, name)
    state.runtimes[uid] = ObjectRuntime(
        submit=_submitter(state, namespace, uid, wake),
        selection_budget=state.settings.selection_budget,
        metrics_token=token,
    )
    cadence = Cadence(due=time.monotonic())
    # The newest turn's thread: one kopf cancelled may outlive the daemon.
    turn: concurrent.futures.Future[Evaluation | None] | None = None
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
                    turn = state.executor.submit(
                        _evaluate_and_write,
                        state,
                        ref,
                        dict(spec),
                        _newest_status(state, uid, dict(status)),
                        uid,
                        _claims(indexes, namespace, spec),
                        lateness,
                    )
                    evaluation = await asyncio.wrap_future(turn)
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
        # Deleted: not the operator stopping, nor the object leaving this shard.
        if stopped.reason and stopped.reason & kopf.DaemonStoppingReason.RESOURCE_DELETED:
            await _forget_deletion_costs(state, ScalerRef(namespace, name), turn, logger)
