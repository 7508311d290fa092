"""What one evaluation hands back: its status, conditions merged in, and its Events.

Kept apart from :mod:`.reconcile`, which decides and acts, so that every way
an evaluation ends (decided, blocked before deciding, failed) is reported
the same way: conditions merged with the object's own, an Event for each
cause of a condition change (:func:`transition_notes`), the pending scale resolved.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from predictive_scaler.forecasting import ScheduledSelection
from predictive_scaler.operator import metrics
from predictive_scaler.operator.conditions import (
    Condition,
    Lateness,
    blocked,
    lateness_condition,
    merge,
)
from predictive_scaler.operator.persisted import PENDING_SCALE
from predictive_scaler.operator.report import timestamp


@dataclass(frozen=True)
class ObjectRef:
    namespace: str
    name: str
    generation: int
    created: str


@dataclass(frozen=True)
class EventNote:
    type: str  # Normal | Warning
    reason: str
    message: str


@dataclass(frozen=True)
class Evaluation:
    """The status to write, the Events to post, and the metrics to publish.

    Metrics are published by :meth:`.reconcile.Evaluator.evaluate` only while the object
    is still served (:func:`metrics.publishing`): an object deleted while its
    evaluation ran must not have its series put back after they were dropped.
    """

    status: dict[str, Any]
    events: tuple[EventNote, ...]
    publications: tuple[Callable[[], None], ...] = field(default=(), compare=False, repr=False)


def reported(
    ref: ObjectRef,
    raw_status: Mapping[str, Any],
    now: float,
    conditions: Sequence[Condition],
    *,
    status: dict[str, Any] | None = None,
    events: Sequence[EventNote] = (),
    lateness: Lateness | None = None,
    resolves_pending: bool = True,
) -> Evaluation:
    """``status`` with ``conditions`` (and EvaluationsLate, given ``lateness``) merged into
    the object's own; ``events`` and then an Event for each cause of a condition change.

    An evaluation that decided (``resolves_pending``) has folded a pending scale into
    the state it writes, so it clears it, unless ``status`` carries a new one (a patch
    refused, which may still have landed: a 504). One that did not decide leaves it.
    """
    if lateness is not None:
        conditions = [*conditions, lateness_condition(lateness)]
    merged, changed = merge(
        raw_status.get("conditions") or [],
        conditions,
        now=timestamp(now),
        generation=ref.generation,
    )
    full = dict(status or {})
    if resolves_pending:
        full.setdefault(PENDING_SCALE, None)
    full.update(
        observedGeneration=ref.generation,
        lastEvaluationTime=timestamp(now),
        conditions=merged,
    )
    return Evaluation(full, (*events, *transition_notes(changed)))


def transition_notes(changed: Sequence[Condition]) -> list[EventNote]:
    """One Event per reason among the conditions that turned, said by the first of them.

    One cause turns several conditions at once (a target gone turns all five):
    an Event for each would be five for one thing. The others are named after
    the first's words; a Warning when any of them is unhealthy.
    """
    by_reason: dict[str, list[Condition]] = {}
    for condition in changed:
        by_reason.setdefault(condition.reason, []).append(condition)
    notes = []
    for reason, turned in by_reason.items():
        # A Warning speaks in the words of a condition that warns.
        first = next((c for c in turned if not c.healthy), turned[0])
        others = [c for c in turned if c is not first]
        message = f"{first.type} is {first.status}: {first.message}"
        if others:
            message += " (also " + ", ".join(f"{c.type} {c.status}" for c in others) + ")"
        healthy = all(c.healthy for c in turned)
        notes.append(EventNote("Normal" if healthy else "Warning", reason, message))
    return notes


def blocked_evaluation(
    ref: ObjectRef,
    raw_status: Mapping[str, Any],
    now: float,
    reason: str,
    message: str,
    *,
    lateness: Lateness | None,
) -> Evaluation:
    # The decision fields of an earlier evaluation would mislead: say what stops this one.
    status = {"decision": f"not evaluated: {message}", "desiredReplicas": None}
    conditions = blocked(reason, message)
    # A scale patched and not yet folded into the state waits for an evaluation that
    # decides: cleared here, the next one would scale again within the policy's period.
    evaluation = reported(
        ref, raw_status, now, conditions, status=status, lateness=lateness, resolves_pending=False
    )
    # Its load, forecast and desired count would otherwise freeze at the last evaluation's.
    withdrawn = functools.partial(metrics.withdraw_decision, ref.namespace, ref.name)
    return replace(evaluation, publications=(withdrawn,))


def selection_notes(selection: ScheduledSelection) -> list[EventNote]:
    """A Warning when the selection that came back failed, or was stopped by its CPU budget;
    a Normal Event (and the counter) when the load left the forecast and a selection was
    asked for early."""
    notes: list[EventNote] = []
    broke = selection.take_break()
    if broke is not None:
        metrics.SELECTIONS_ON_BREAK.inc()
        notes.append(EventNote("Normal", "LoadLeftForecast", broke))
    installed, failure = selection.take_installed(), selection.handover.take_failure()
    if failure is not None:
        return [*notes, EventNote("Warning", "SelectionFailed", failure)]
    if installed is None or not installed.over_budget:
        return notes
    message = (
        f"model selection stopped after {installed.cpu_seconds:.1f} s of CPU"
        f" (PREDICTIVE_SCALER_SELECTION_BUDGET) and kept {selection.chosen}, the best it had"
        f" scored; not scored: {', '.join(installed.unscored)}"
    )
    return [*notes, EventNote("Warning", "SelectionOverBudget", message)]
