"""Which other autoscaler already sets a target's replicas, from the operator's watches.

Both kinds of rival come from kopf indexes (HPAs, and PredictiveScalers of
every shard), so the check costs no API request per evaluation: at 1,000
objects a list per evaluation was a third of the API server's work. An index
trails the API server by the watch's latency; the rule below is a total order,
so two objects created at the same moment agree on the winner as soon as each
has seen the other.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from predictive_scaler.operator.resource import KIND


@dataclass(frozen=True, order=True)
class ScalerClaim:
    """A PredictiveScaler on a target, as its index entry. Ordered by age, then name."""

    created: str  # metadata.creationTimestamp, RFC 3339 in UTC: orders as a string
    name: str
    acts: bool  # mode Auto: a DryRun object sets no replicas and claims nothing
    deleting: bool


@dataclass(frozen=True)
class TargetClaims:
    """The HPAs and the PredictiveScalers whose scaleTargetRef names one workload."""

    hpas: tuple[str, ...] = ()
    scalers: tuple[ScalerClaim, ...] = ()

    @classmethod
    def of(cls, hpas: Iterable[str], scalers: Iterable[ScalerClaim]) -> TargetClaims:
        return cls(tuple(sorted(hpas)), tuple(sorted(scalers)))

    def rival(self, name: str, created: str) -> str | None:
        """The HPA, or the older acting PredictiveScaler, that keeps the target from `name`.

        Between two PredictiveScalers the older one (then the smaller name) keeps
        the target, so exactly one of them acts whatever the order of events.
        """
        if self.hpas:
            return f"HorizontalPodAutoscaler/{self.hpas[0]}"
        mine = (created, name)
        for claim in self.scalers:
            older = (claim.created, claim.name) < mine
            if older and claim.acts and not claim.deleting:
                return f"{KIND}/{claim.name}"
        return None


NO_CLAIMS = TargetClaims()
