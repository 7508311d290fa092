"""Which other autoscaler already sets a target's replicas, from the operator's watches.

Both kinds of rival come from kopf indexes (HPAs, and PredictiveScalers of
every shard), so the check costs no API request per evaluation: at 1,000
objects a list per evaluation was a third of the API server's work. An index
trails the API server by the watch's latency; the rule below is a total order,
so two objects created at the same moment agree on the winner as soon as each
has seen the other.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from predictive_scaler.operator.resource import KIND


@dataclass(frozen=True, order=True)
class ScalerClaim:
    """A PredictiveScaler on a target, as its index entry. Ordered by age, then name."""

    created: str  # metadata.creationTimestamp, RFC 3339 in UTC: orders as a string
    name: str
    acts: bool  # mode Auto: a DryRun object sets no replicas and claims nothing
    deleting: bool


@dataclass(frozen=True, order=True)
class HpaClaim:
    """An HPA on a target, as its index entry; ``scaled_object`` names the KEDA
    ScaledObject that made it (users write the ScaledObject, never its HPA)."""

    name: str
    scaled_object: str | None = None

    @classmethod
    def of(cls, name: str, owners: Iterable[Mapping[str, Any]]) -> HpaClaim:
        """HPA ``name``'s claim, from its metadata.ownerReferences."""
        for owner in owners:
            if (
                owner.get("controller")
                and owner.get("kind") == "ScaledObject"
                and str(owner.get("apiVersion", "")).startswith("keda.sh/")
            ):
                return cls(name, str(owner.get("name")))
        return cls(name)

    def describe(self) -> str:
        hpa = f"HorizontalPodAutoscaler/{self.name}"
        if self.scaled_object is None:
            return hpa
        return f"KEDA's ScaledObject/{self.scaled_object} (through {hpa})"


@dataclass(frozen=True)
class TargetClaims:
    """The HPAs and the PredictiveScalers whose scaleTargetRef names one workload."""

    hpas: tuple[HpaClaim, ...] = ()
    scalers: tuple[ScalerClaim, ...] = ()

    @classmethod
    def of(cls, hpas: Iterable[HpaClaim], scalers: Iterable[ScalerClaim]) -> TargetClaims:
        return cls(tuple(sorted(hpas)), tuple(sorted(scalers)))

    def rival(self, name: str, created: str) -> str | None:
        """The HPA, or the older acting PredictiveScaler, that keeps the target from `name`.

        Between two PredictiveScalers the older one (then the smaller name) keeps
        the target, so exactly one of them acts whatever the order of events.
        """
        if self.hpas:
            return self.hpas[0].describe()
        mine = (created, name)
        for claim in self.scalers:
            older = (claim.created, claim.name) < mine
            if older and claim.acts and not claim.deleting:
                return f"{KIND}/{claim.name}"
        return None


NO_CLAIMS = TargetClaims()
