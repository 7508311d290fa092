"""The pure parts of crash safety: the pending-scale record, failpoints, request counting."""

from __future__ import annotations

import pytest

from predictive_scaler.operator import failpoints
from predictive_scaler.operator.apiclient import resource_of
from predictive_scaler.operator.persisted import (
    PendingScale,
    pending_scale_status,
    previous_scaling_state,
    restored_scaling_state,
    scaling_state_status,
)
from predictive_scaler.operator.shard import selector_matcher
from predictive_scaler.scaling import DEFAULT_BEHAVIOR, ScalingState


def test_a_pending_scale_survives_the_round_trip_through_status() -> None:
    pending = PendingScale(previous=3, desired=5, at=1700000000.5)
    assert PendingScale.from_status({"pendingScale": pending.to_status()}) == pending


@pytest.mark.parametrize(
    "stored",
    [
        None,
        "",
        "null",
        "{",
        '{"from": 1}',
        '{"from": "x", "to": 2, "at": 0}',
        '{"from": 2, "to": 4, "at": NaN}',
        '{"from": 2, "to": 4, "at": Infinity}',
    ],
)
def test_a_missing_or_damaged_pending_scale_reads_as_none(stored: str | None) -> None:
    assert PendingScale.from_status({"pendingScale": stored}) is None


def test_a_scaling_state_with_a_nan_time_reads_as_none_not_as_a_failure_later() -> None:
    # Python's JSON reads NaN; the first use of the time then failed every evaluation,
    # and a failed evaluation never rewrote the state: the object stopped for good.
    written = scaling_state_status(ScalingState(last_scale_time=1700000000.0))["scalingState"]
    damaged = {"scalingState": written.replace("1700000000.0", "NaN")}
    assert "NaN" in damaged["scalingState"]
    assert previous_scaling_state(damaged) == ScalingState()


def test_a_scale_patched_but_never_recorded_starts_the_cool_down_from_its_patch() -> None:
    """The last process patched 3 -> 5 and died before its status said so."""
    earlier = ScalingState(last_scale_time=1699999000.0)
    status = {
        **scaling_state_status(earlier),
        **pending_scale_status(PendingScale(previous=3, desired=5, at=1700000000.5)),
    }

    landed = restored_scaling_state(status, 5, DEFAULT_BEHAVIOR)
    not_landed = restored_scaling_state(status, 3, DEFAULT_BEHAVIOR)

    assert landed.last_scale_time == 1700000000.5
    assert [event.value for event in landed.scale_up_events] == [2]
    assert not_landed == earlier
    assert restored_scaling_state({}, 5, DEFAULT_BEHAVIOR) == ScalingState()


def test_failpoints_parse_chances_and_refuse_unknown_points() -> None:
    assert failpoints._parse("scale:after-patch=0.5, evict:after") == {
        "scale:after-patch": 0.5,
        "evict:after": 1.0,
    }
    with pytest.raises(ValueError, match="unknown point 'scale:later'"):
        failpoints._parse("scale:later=1")
    with pytest.raises(ValueError, match="no failpoint"):
        failpoints.reach("nowhere")


@pytest.mark.parametrize(
    ("url", "resource"),
    [
        ("https://h/apis/apps/v1/namespaces/x/deployments/web/scale", "deployments/scale"),
        ("https://h/apis/apps/v1/namespaces/x/deployments/web", "deployments"),
        ("https://h/api/v1/nodes", "nodes"),
        ("https://h/api/v1/nodes/n1", "nodes"),
        ("https://h/api/v1/namespaces/x/pods/p/eviction", "pods/eviction"),
        ("https://h/api/v1/namespaces/x", "namespaces"),
        (
            "https://h/apis/autoscaling.predictive-scaler.io/v1alpha1/namespaces/x/"
            "predictivescalers?fieldSelector=spec.scaleTargetRef.name%3Dweb",
            "predictivescalers",
        ),
    ],
)
def test_requests_are_counted_by_resource_and_subresource(url: str, resource: str) -> None:
    assert resource_of(url) == resource


@pytest.mark.parametrize(
    ("selector", "labels", "matches"),
    [
        ("", {}, True),
        ("shard=a", {"shard": "a"}, True),
        ("shard==a", {"shard": "b"}, False),
        ("shard!=a", {}, True),
        ("shard in (a, b),tier", {"shard": "b", "tier": "web"}, True),
        ("shard in (a, b),tier", {"shard": "b"}, False),
        ("shard notin (a,b)", {"shard": "c"}, True),
        ("!shard", {"shard": "a"}, False),
        ("!shard", {}, True),
    ],
)
def test_shard_selectors_match_as_the_api_server_does(
    selector: str, labels: dict[str, str], matches: bool
) -> None:
    assert selector_matcher(selector)(labels) is matches


def test_a_malformed_shard_selector_names_the_term() -> None:
    with pytest.raises(ValueError, match="'shard=a=b'"):
        selector_matcher("tier,shard=a=b")
