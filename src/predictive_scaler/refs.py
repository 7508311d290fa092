"""Typed references to the objects the operator reasons about, instead of keyed strings.

A string such as ``"shop/Deployment/web"`` or a ``("node", name)`` scope makes
two different things equal when their parts happen to coincide (a namespace
called ``node``, a PredictiveScaler named like a Node). These values cannot be
confused: each kind of object has its own type, compared field by field.
``str()`` gives the form that messages and logs show.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class NodeRef:
    """A Node (cluster-scoped)."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, order=True)
class PodRef:
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True, order=True)
class WorkloadRef:
    """A workload that owns pods: what a PredictiveScaler's ``scaleTargetRef`` names."""

    namespace: str
    kind: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.kind}/{self.name}"


@dataclass(frozen=True, order=True)
class ScalerRef:
    """A PredictiveScaler object."""

    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"
