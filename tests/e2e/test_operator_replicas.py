"""Several operators on one cluster: replicas behind a Lease, and shards by label selector."""

from __future__ import annotations

import datetime
import time
from typing import Any

from kubernetes import client

from predictive_scaler.operator.leadership import LeaseTimings
from predictive_scaler.operator.resource import GROUP, PLURAL, VERSION
from predictive_scaler_dev.demo.load import LoadDriver
from predictive_scaler_dev.demo.process import OperatorProcess
from tests.e2e.test_operator_faults import create, fast_scaler
from tests.fixtures.cluster import create_deployment, wait_for
from tests.fixtures.operator import (
    StartOperator,
    hold_for,
    read_status,
    samples,
    wait_condition,
)

TIMINGS = LeaseTimings(duration=8, renew_deadline=5, retry_period=1)
# What the Lease promises is when a standby holds it; how soon kopf then starts
# its watches and the object's daemon depends on how busy the machine is.
TAKE_OVER_SLACK_SECONDS = 1.0  # polling the leader gauge, and the acquiring request


def leading(operator: OperatorProcess) -> bool:
    return samples(operator, "predictive_scaler_leader").get((), 0.0) == 1.0


def evaluations(operator: OperatorProcess) -> float:
    return samples(operator, "predictive_scaler_reconcile_duration_seconds_count").get((), 0.0)


def served(operator: OperatorProcess) -> set[str]:
    """The objects this operator has evaluated (and not forgotten)."""
    return {dict(labels)["name"] for labels in samples(operator, "predictive_scaler_condition")}


def evaluated_at(custom_objects: client.CustomObjectsApi, namespace: str, name: str) -> float:
    stamp = read_status(custom_objects, namespace, name).get("lastEvaluationTime")
    if not stamp:
        return 0.0
    parsed = datetime.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ")
    return parsed.replace(tzinfo=datetime.UTC).timestamp()


def lease_env(namespace: str) -> dict[str, str]:
    return {
        "PREDICTIVE_SCALER_REBALANCE_MODE": "Off",
        "PREDICTIVE_SCALER_LEADER_ELECTION": "predictive-scaler",
        "PREDICTIVE_SCALER_LEADER_ELECTION_NAMESPACE": namespace,
        "PREDICTIVE_SCALER_LEASE_DURATION": str(TIMINGS.duration),
        "PREDICTIVE_SCALER_LEASE_RENEW_DEADLINE": str(TIMINGS.renew_deadline),
        "PREDICTIVE_SCALER_LEASE_RETRY_PERIOD": str(TIMINGS.retry_period),
    }


def test_of_two_replicas_one_acts_and_the_other_takes_over_within_the_bound(
    start_operator: StartOperator,
    custom_objects: client.CustomObjectsApi,
    steady_load: LoadDriver,
    namespace: str,
) -> None:
    first = start_operator(lease_env(namespace))
    wait_for(lambda: leading(first), what="the first replica to hold the Lease")
    # The second one answers its liveness probe (start_operator waited for it) and stands by.
    second = start_operator(lease_env(namespace))
    create(custom_objects, namespace, fast_scaler("web", "web"))
    wait_condition(custom_objects, namespace, "web", "Ready", "True", timeout=90)

    def only_the_first_acts() -> None:
        assert leading(first)
        assert not leading(second)
        assert evaluations(second) == 0
        assert not served(second)

    hold_for(6, only_the_first_acts)
    assert evaluations(first) >= 2

    # A crash: the Lease is left to expire.
    first.kill()
    killed = time.time()
    wait_for(
        lambda: leading(second),
        timeout=TIMINGS.failover_bound + 30,
        what="the standby to hold the Lease after the crash",
    )
    failover = time.time() - killed
    assert failover <= TIMINGS.failover_bound + TAKE_OVER_SLACK_SECONDS, failover
    wait_for(
        lambda: evaluated_at(custom_objects, namespace, "web") > killed,
        timeout=60,
        what="the standby to evaluate after the crash",
    )

    # A clean stop hands the Lease over at once, well inside one lease duration.
    third = start_operator(lease_env(namespace))
    assert not leading(third)
    second.stop()
    stopped = time.time()
    wait_for(lambda: leading(third), timeout=TIMINGS.duration * 2, what="the hand-over")
    assert time.time() - stopped < TIMINGS.duration, "the Lease was not released at shutdown"
    wait_for(
        lambda: evaluated_at(custom_objects, namespace, "web") > stopped,
        timeout=30,
        what="the new holder to evaluate",
    )


def sharded(body: dict[str, Any], shard: str | None) -> dict[str, Any]:
    if shard is not None:
        body["metadata"]["labels"] = {"shard": shard}
    return body


def test_two_shards_never_act_on_the_same_object(
    start_operator: StartOperator,
    custom_objects: client.CustomObjectsApi,
    apps_v1: client.AppsV1Api,
    namespace: str,
) -> None:
    for name in ("web-a", "web-b", "web-none"):
        create_deployment(apps_v1, namespace, name, 2, cpu_request="1")
    shard_a = start_operator(
        {"PREDICTIVE_SCALER_REBALANCE_MODE": "Off", "PREDICTIVE_SCALER_SHARD_SELECTOR": "shard=a"}
    )
    shard_b = start_operator(
        {"PREDICTIVE_SCALER_REBALANCE_MODE": "Off", "PREDICTIVE_SCALER_SHARD_SELECTOR": "shard=b"}
    )
    create(custom_objects, namespace, sharded(fast_scaler("a", "web-a"), "a"))
    create(custom_objects, namespace, sharded(fast_scaler("b", "web-b"), "b"))
    create(custom_objects, namespace, sharded(fast_scaler("none", "web-none"), None))
    for name in ("a", "b"):
        wait_for(
            lambda name=name: evaluated_at(custom_objects, namespace, name) > 0,  # type: ignore[misc]
            what=f"{name} to be evaluated by its shard",
        )
    # A second scaler of web-a in the other shard: the older one keeps the
    # target across shards, because rivals are found by target, not by shard.
    create(custom_objects, namespace, sharded(fast_scaler("a-too", "web-a"), "b"))
    rival = wait_condition(
        custom_objects, namespace, "a-too", "Ready", "False", "ConflictingAutoscaler"
    )
    assert "PredictiveScaler/a already manages Deployment/web-a" in rival["message"]

    def disjoint() -> None:
        assert served(shard_a) == {"a"}
        assert served(shard_b) == {"b", "a-too"}
        assert not read_status(custom_objects, namespace, "none"), "an unselected object"

    hold_for(6, disjoint)

    # Moving an object to the other shard moves it whole: the old shard forgets it.
    custom_objects.patch_namespaced_custom_object(
        GROUP,
        VERSION,
        namespace,
        PLURAL,
        "a",
        {"metadata": {"labels": {"shard": "b"}}},
    )
    wait_for(lambda: "a" not in served(shard_a), what="shard a to let go of a")
    wait_for(lambda: "a" in served(shard_b), what="shard b to take a")
    frozen = evaluations(shard_a)

    def shard_a_idle() -> None:
        assert evaluations(shard_a) == frozen

    hold_for(6, shard_a_idle)
