"""Where load and usage come from: the operator's one seam to a metrics backend.

The evaluator asks a :class:`MetricSource` for an object's load history, and
the rebalancer for node and pod usage; neither builds a query or knows the
backend. Prometheus (:mod:`.prometheus`) answers everything, PromQL written in
one place per query. The ``metrics.k8s.io`` API (:mod:`.metrics_api`, what
metrics-server serves) answers the ``resource:`` shorthand and usage without
Prometheus, from the history the operator records itself. The operator runs
one of them, chosen by ``PREDICTIVE_SCALER_METRICS_SOURCE``, like the
descheduler's usage client.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, Self

from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.operator.resource import MetricSpec, ScaleTargetRef
from predictive_scaler.refs import PodRef

# The usage every source measures, per node and per pod: CPU in cores, memory in bytes.
CPU = "cpu"
MEMORY = "memory"


class MetricsError(RuntimeError):
    """The load could not be read; ``reason`` is the condition reason to report."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class Refusal:
    """Why a source will not read an object's load at all (a condition, not a retry)."""

    reason: str
    message: str


@dataclass(frozen=True)
class LoadSeries:
    """An object's load, as it is asked of a source: one value per step.

    Either ``resource`` (the shorthand: ``cpu`` or ``memory`` of the target's
    pods) or ``query`` (the user's PromQL). ``pod_selector`` is the label
    selector of the target's pods (from its scale subresource; empty when the
    target gives none); ``rate_window`` is how many seconds before its
    timestamp a CPU sample averages. Sizing (``targetPerReplica``) is not part
    of it: a series read once serves whatever the object sizes with.
    """

    namespace: str
    target: ScaleTargetRef
    resource: str | None
    query: str | None
    pod_selector: str
    rate_window: float

    @classmethod
    def of(
        cls,
        namespace: str,
        target: ScaleTargetRef,
        metric: MetricSpec,
        pod_selector: str,
        rate_window: float,
    ) -> LoadSeries:
        return cls(namespace, target, metric.resource, metric.query, pod_selector, rate_window)


@dataclass(frozen=True)
class Usage:
    """CPU and memory now: per node (by name) and per pod."""

    nodes: Mapping[str, Mapping[str, float]]
    pods: Mapping[PodRef, Mapping[str, float]]


class MetricSource(Protocol):
    """What the operator reads; every method raises :class:`MetricsError` on failure."""

    @property
    def timeout(self) -> float:
        """Seconds one request may take."""
        ...

    def with_timeout(self, seconds: float) -> Self:
        """The same source, its requests bounded by ``seconds`` (an evaluation's budget left)."""
        ...

    def refusal(self, series: LoadSeries, *, confine: bool, points: int) -> Refusal | None:
        """Why this source will never read ``series`` (``confine``: its namespace only).

        ``points`` is the most points one read of it asks for (the longer window).
        """
        ...

    def samples(self, series: LoadSeries, *, step: float, start: float, end: float) -> FloatArray:
        """The load at every step from ``start`` to ``end`` (on the step grid); NaN = missing."""
        ...

    def usage(self) -> Usage:
        """Every node's and every running pod's CPU and memory now."""
        ...

    def node_cpu_history(self, step: float, points: int) -> Mapping[str, Sequence[float]]:
        """Each node's CPU over the last ``points`` steps, oldest first."""
        ...

    def pod_cpu_history(self, step: float, points: int) -> Mapping[PodRef, Sequence[float]]:
        """Each pod's CPU over the last ``points`` steps, oldest first."""
        ...
