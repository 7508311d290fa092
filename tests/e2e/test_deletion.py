"""Objects deleted while they are being evaluated leave no series on /metrics.

Issue 23: applying 50 objects and deleting them all left 7 of them on the
operator's /metrics until a restart, because an evaluation still running
re-published after the object's clean-up had dropped its series.
"""

from __future__ import annotations

from typing import Any

from kubernetes import client

from predictive_scaler.operator.resource import GROUP, PLURAL, VERSION
from predictive_scaler_dev.demo.process import OperatorProcess
from tests.fixtures.cluster import create_deployment, wait_for
from tests.fixtures.operator import StartOperator, hold_for, read_status, samples, scaler

OBJECTS = 40
SYNC_SECONDS = 2.0


def named(operator: OperatorProcess, names: set[str]) -> set[str]:
    """Which of ``names`` still have a series of any of the operator's per-object metrics."""
    found = set()
    for metric in (
        "predictive_scaler_condition",
        "predictive_scaler_load",
        "predictive_scaler_replicas",
        "predictive_scaler_forecast",
        "predictive_scaler_evaluation_lateness_seconds",
    ):
        for labels in samples(operator, metric):
            name = dict(labels).get("name")
            if name in names:
                found.add(name)
    return found


def test_objects_deleted_mid_evaluation_leave_no_series(
    start_operator: StartOperator,
    apps_v1: client.AppsV1Api,
    core_v1: client.CoreV1Api,
    custom_objects: client.CustomObjectsApi,
    namespace: str,
) -> None:
    create_deployment(apps_v1, namespace, "web", 1)
    operator = start_operator({"PREDICTIVE_SCALER_REBALANCE_MODE": "Off"})
    names = {f"obj-{index}" for index in range(OBJECTS)}
    for name in sorted(names):
        body = scaler(
            name,
            "web",
            metric={"resource": "cpu", "targetPerReplica": "500m"},
            mode="DryRun",  # DryRun objects may share a target
            syncPeriod=f"{SYNC_SECONDS:g}s",
        )
        body["metadata"]["labels"] = {"batch": "doomed"}
        custom_objects.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, body)

    def all_evaluated() -> bool:
        return all(
            read_status(custom_objects, namespace, name).get("lastEvaluationTime") for name in names
        )

    wait_for(all_evaluated, timeout=120, what=f"all {OBJECTS} objects evaluated")
    assert named(operator, names) == names
    # Evaluations run all the time now (40 objects every 2 s): delete them all at once.
    custom_objects.delete_collection_namespaced_custom_object(
        GROUP, VERSION, namespace, PLURAL, label_selector="batch=doomed"
    )

    def gone() -> bool:
        listed: Any = custom_objects.list_namespaced_custom_object(
            GROUP, VERSION, namespace, PLURAL
        )
        return not listed["items"]

    wait_for(gone, what="every object finalised")

    def none_left() -> None:
        assert named(operator, names) == set()

    # An object is finalised once its loop has stopped and dropped its series:
    # nothing is left then, and no evaluation still in flight brings any back.
    hold_for(3 * SYNC_SECONDS, none_left)
    # Each loop stopped by itself within its grace: kopf cancelled none of them.
    cancelled = [line for line in operator.log.read_text().splitlines() if "is cancelled" in line]
    assert cancelled == [], cancelled[:3]
