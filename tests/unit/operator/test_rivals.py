"""Which autoscaler keeps a target: the rule the index-fed rival check applies."""

from __future__ import annotations

import itertools

from predictive_scaler.operator.rivals import NO_CLAIMS, HpaClaim, ScalerClaim, TargetClaims

EARLY = "2026-01-01T00:00:00Z"
LATE = "2026-01-01T00:00:05Z"


def claim(name: str, created: str, *, acts: bool = True, deleting: bool = False) -> ScalerClaim:
    return ScalerClaim(created=created, name=name, acts=acts, deleting=deleting)


def test_alone_no_one_keeps_the_target() -> None:
    assert NO_CLAIMS.rival("web", EARLY) is None
    assert TargetClaims.of([], [claim("web", EARLY)]).rival("web", EARLY) is None


def test_an_hpa_always_keeps_the_target_and_the_first_by_name_is_named() -> None:
    claims = TargetClaims.of([HpaClaim("web-b"), HpaClaim("web-a")], [claim("web", EARLY)])
    assert claims.rival("web", EARLY) == "HorizontalPodAutoscaler/web-a"


def test_an_hpa_keda_made_is_named_by_its_scaled_object_the_one_users_wrote() -> None:
    keda = {"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject", "name": "web"}
    made = HpaClaim.of("keda-hpa-web", [{**keda, "controller": True}])
    claims = TargetClaims.of([made], [])
    assert claims.rival("web", EARLY) == (
        "KEDA's ScaledObject/web (through HorizontalPodAutoscaler/keda-hpa-web)"
    )
    # Owned by something else, or not as its controller: an HPA like any other.
    assert HpaClaim.of("web", [keda]) == HpaClaim("web")
    other = {"apiVersion": "example.com/v1", "kind": "ScaledObject", "name": "web"}
    assert HpaClaim.of("web", [{**other, "controller": True}]) == HpaClaim("web")


def test_the_older_scaler_keeps_the_target_then_the_smaller_name() -> None:
    older, newer = claim("zeta", EARLY), claim("alpha", LATE)
    claims = TargetClaims.of([], [newer, older])
    assert claims.rival("alpha", LATE) == "PredictiveScaler/zeta"
    assert claims.rival("zeta", EARLY) is None
    twins = TargetClaims.of([], [claim("b", EARLY), claim("a", EARLY)])
    assert twins.rival("b", EARLY) == "PredictiveScaler/a"
    assert twins.rival("a", EARLY) is None


def test_exactly_one_of_several_scalers_acts_whatever_the_order() -> None:
    scalers = [claim("c", LATE), claim("a", LATE), claim("b", EARLY)]
    for order in itertools.permutations(scalers):
        claims = TargetClaims.of([], order)
        acting = [s.name for s in scalers if claims.rival(s.name, s.created) is None]
        assert acting == ["b"]


def test_dry_run_and_deleted_scalers_claim_nothing() -> None:
    claims = TargetClaims.of(
        [], [claim("watcher", EARLY, acts=False), claim("going", EARLY, deleting=True)]
    )
    assert claims.rival("web", LATE) is None
