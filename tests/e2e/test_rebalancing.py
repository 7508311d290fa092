"""The rebalancer on the local cluster: hot kwok nodes are drained onto cooler ones."""

from __future__ import annotations

import datetime
import itertools
import re
import uuid
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from kubernetes import client

from predictive_scaler.operator.ranking import RANKED_BY_ANNOTATION as RANKED_BY
from predictive_scaler.operator.resource import GROUP, PLURAL, VERSION
from predictive_scaler.rebalancing.scale_in import DELETION_COST_ANNOTATION as DELETION_COST
from predictive_scaler.traces import trace_rows
from predictive_scaler_dev.demo.load import LoadDriver
from predictive_scaler_dev.localcluster import NodeShape
from predictive_scaler_dev.localcluster.kube import running_pods
from tests.fixtures.cluster import (
    KwokNodes,
    PrometheusQuery,
    pinned_deployment,
    wait_for,
)
from tests.fixtures.operator import StartOperator, scaler

# A move's nodes wait SETTLE; the pods a move created may not move for COOLDOWN,
# longer than the test, so no pod may be moved twice in it.
SETTLE = 20.0
COOLDOWN = 600.0
MOVED = re.compile(r"rebalanced: (\S+) from (\S+) to (\S+)")
Moved = tuple[datetime.datetime, str, str, str]


def busy_google_vms(traces: Path, count: int) -> list[float]:
    """Mean CPU of the `count` busiest Google 2011 VMs, in cores of a 4-core VM."""
    by_vm: dict[str, list[float]] = {}
    for row in trace_rows(traces / "google_2011_vm_usage_5min.csv.gz"):
        by_vm.setdefault(row["vm"], []).append(float(row["cpu_percent"]))
    means = sorted((float(np.mean(v)) for v in by_vm.values()), reverse=True)
    return [m / 100 * 4 for m in means[:count]]


def rebalancer_moves(core: client.CoreV1Api, namespace: str) -> list[Moved]:
    """(time, pod, source, destination) of every eviction the rebalancer reported."""
    found = []
    for event in core.list_namespaced_event(namespace).items:
        if event.source is None or event.source.component != "predictive-scaler-rebalancer":
            continue
        match = MOVED.search(event.message or "")
        if event.reason == "Evicted" and match and event.first_timestamp is not None:
            pod, source, destination = match.groups()
            found.append((event.first_timestamp, pod, source, destination))
    return found


def assert_no_node_drained_twice_within_the_settle(moved: list[Moved]) -> None:
    by_source: dict[str, list[datetime.datetime]] = {}
    for when, _, source, _ in moved:
        by_source.setdefault(source, []).append(when)
    for times in by_source.values():
        gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(sorted(times))]
        assert all(gap >= SETTLE - 1 for gap in gaps), gaps


def test_hot_nodes_are_drained_onto_cooler_ones_within_the_rules(
    start_operator: StartOperator,
    kwok_nodes: KwokNodes,
    core_v1: client.CoreV1Api,
    apps_v1: client.AppsV1Api,
    policy_v1: client.PolicyV1Api,
    custom_objects: client.CustomObjectsApi,
    namespace: str,
    traces_dir: Path,
    prometheus_query: PrometheusQuery,
) -> None:
    pool = f"pool-{uuid.uuid4().hex[:6]}"
    shape = NodeShape(cpu="8", memory="32Gi", labels={"pool": pool})
    hot = kwok_nodes.create(shape, count=2)
    for name, replicas in (("batch", 8), ("other", 2)):
        apps_v1.create_namespaced_deployment(namespace, pinned_deployment(name, replicas, pool))  # type: ignore[arg-type]
    agent = pinned_deployment("agent", 1, pool)
    del agent["spec"]["replicas"]
    agent["kind"] = "DaemonSet"
    apps_v1.create_namespaced_daemon_set(namespace, agent)  # type: ignore[arg-type]
    budget = {
        "metadata": {"name": "batch"},
        "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "batch"}}},
    }
    policy_v1.create_namespaced_pod_disruption_budget(namespace, budget)  # type: ignore[arg-type]
    wait_for(
        lambda: (
            len(running_pods(core_v1, namespace, "batch")) == 8
            and len(running_pods(core_v1, namespace, "other")) == 2
            and len(running_pods(core_v1, namespace, "agent")) == 2
        ),
        what="pods Running",
    )
    assert {p.spec.node_name for p in running_pods(core_v1, namespace, "batch") if p.spec} <= set(
        hot
    )
    originals = {p.metadata.name for p in running_pods(core_v1, namespace, "batch") if p.metadata}
    stayers = {
        p.metadata.name
        for a in ("other", "agent")
        for p in running_pods(core_v1, namespace, a)
        if p.metadata
    }

    # The opted-in workload carries the load of the eight busiest Google VMs,
    # spread over its pods; "other" and the DaemonSet "agent" share the hot nodes
    # but may never be moved.
    load = sum(busy_google_vms(traces_dir, 8))
    with ExitStack() as stack:
        for driver in (
            LoadDriver(core_v1, apps_v1, namespace, "batch", lambda _: load),
            LoadDriver(core_v1, apps_v1, namespace, "other", lambda _: 2.0),
            LoadDriver(core_v1, apps_v1, namespace, "agent", lambda _: 1.0),
        ):
            stack.enter_context(driver)
        cool = kwok_nodes.create(shape, count=2)
        body = scaler(
            "batch", "batch", metric={"resource": "cpu", "targetPerReplica": "1"}, mode="DryRun"
        )
        body["spec"]["rebalance"] = {"enabled": True}
        custom_objects.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, body)
        # Prometheus must see the skew (hot nodes busy, cool ones scraped) before the operator.
        prometheus_query(
            f'rate(node_cpu_usage_seconds_total{{node=~"{"|".join(hot + cool)}"}}[8s])',
            lambda found: (
                len(found) == 4
                and min(s.value for s in found if s.labels["node"] in hot) > load / 2 * 0.8
            ),
        )
        operator = start_operator(
            {
                "PREDICTIVE_SCALER_REBALANCE_MODE": "Auto",
                "PREDICTIVE_SCALER_REBALANCE_INTERVAL": "3s",
                "PREDICTIVE_SCALER_REBALANCE_COOLDOWN": f"{COOLDOWN:.0f}s",
                "PREDICTIVE_SCALER_REBALANCE_SETTLE": f"{SETTLE:.0f}s",
                "PREDICTIVE_SCALER_REBALANCE_BUDGET": "2",
                "PREDICTIVE_SCALER_REBALANCE_PER_NODE": "1",
                "PREDICTIVE_SCALER_REBALANCE_PER_WORKLOAD": "2",
                "PREDICTIVE_SCALER_REBALANCE_WEIGHTS": "cpu=1",
                "PREDICTIVE_SCALER_REBALANCE_NODES": f"pool={pool}",
            }
        )
        degrees: list[float] = []
        # Batch pods serving at each poll: the PDB lets at most one be away at a time.
        serving: list[int] = []

        def degree_halved() -> bool:
            serving.append(len(running_pods(core_v1, namespace, "batch")))
            found = re.search(
                r"^predictive_scaler_balance_degree (\S+)$", operator.metrics_text(), re.MULTILINE
            )
            # The gauge reads 0 until the first cycle has published a degree.
            if found and (degrees or float(found.group(1)) > 0):
                degrees.append(float(found.group(1)))
            halved = len(degrees) > 1 and degrees[-1] <= degrees[0] / 2
            return halved and bool(rebalancer_moves(core_v1, namespace))

        try:
            wait_for(degree_halved, timeout=90, what="the load-balance degree to halve")
        except pytest.fail.Exception:
            pytest.fail(
                f"degree did not halve: {degrees[:3]}...{degrees[-3:]}\n{operator.log_tail()}"
            )

    moved = rebalancer_moves(core_v1, namespace)
    # Only the opted-in workload moved, only off the hot nodes, only onto the cool ones.
    assert all(pod.startswith(f"{namespace}/batch-") for _, pod, _, _ in moved)
    assert {source for _, _, source, _ in moved} <= set(hot)
    assert {destination for _, _, _, destination in moved} <= set(cool)
    after = {
        p.metadata.name
        for a in ("other", "agent")
        for p in running_pods(core_v1, namespace, a)
        if p.metadata
    }
    assert stayers <= after, "a pod that did not opt in, or a DaemonSet pod, was moved"
    assert_no_node_drained_twice_within_the_settle(moved)
    # No ping-pong: every pod moved was one of the originals, never a replacement.
    assert {pod.split("/", 1)[1] for _, pod, _, _ in moved} <= originals
    # The scheduler put the replacements on the cool nodes; the budget held throughout.
    assert {p.spec.node_name for p in running_pods(core_v1, namespace, "batch") if p.spec} & set(
        cool
    )
    assert min(serving) >= 8 - 1, serving


def test_scale_in_removes_the_replicas_on_the_heaviest_node_first(
    start_operator: StartOperator,
    kwok_nodes: KwokNodes,
    core_v1: client.CoreV1Api,
    apps_v1: client.AppsV1Api,
    custom_objects: client.CustomObjectsApi,
    namespace: str,
) -> None:
    pool = f"pool-{uuid.uuid4().hex[:6]}"
    nodes = kwok_nodes.create(NodeShape(cpu="8", memory="32Gi", labels={"pool": pool}), count=3)
    apps_v1.create_namespaced_deployment(namespace, pinned_deployment("web", 6, pool))  # type: ignore[arg-type]
    wait_for(lambda: len(running_pods(core_v1, namespace, "web")) == 6, what="6 web pods")
    placed = {p.spec.node_name for p in running_pods(core_v1, namespace, "web") if p.spec}
    assert placed == set(nodes), "the scheduler spreads the replicas over the pool"
    # A busy neighbour makes the first node the heaviest.
    heavy = pinned_deployment("neighbour", 1, pool)
    heavy["spec"]["template"]["spec"]["nodeSelector"] = {"kubernetes.io/hostname": nodes[0]}
    apps_v1.create_namespaced_deployment(namespace, heavy)  # type: ignore[arg-type]
    with ExitStack() as stack:
        for driver in (
            LoadDriver(core_v1, apps_v1, namespace, "web", lambda _: 1.2),
            LoadDriver(core_v1, apps_v1, namespace, "neighbour", lambda _: 6.0),
        ):
            stack.enter_context(driver)
        body = scaler(
            "web", "web", metric={"resource": "cpu", "targetPerReplica": "1"}, min_replicas=3
        )
        body["spec"]["forecast"]["history"] = "20s"
        body["spec"]["scaling"]["behavior"] = {
            "scaleDown": {
                "stabilizationWindowSeconds": 0,
                "policies": [{"type": "Pods", "value": 10, "periodSeconds": 15}],
            }
        }
        start_operator({"PREDICTIVE_SCALER_REBALANCE_MODE": "Off"})
        custom_objects.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, body)
        wait_for(
            lambda: len(running_pods(core_v1, namespace, "web")) == 3,
            timeout=90,
            what="scale-in to 3",
        )
    remaining = [p.spec.node_name for p in running_pods(core_v1, namespace, "web") if p.spec]
    costs = {
        p.metadata.name: (p.spec.node_name, (p.metadata.annotations or {}).get(DELETION_COST))
        for p in core_v1.list_namespaced_pod(namespace, label_selector="app=web").items
        if p.metadata and p.spec
    }
    assert nodes[0] not in remaining, (remaining, costs)

    # Deleting the scaler takes its ranking off the pods, and only its own: a cost
    # set by hand (on the neighbour) stays.
    web = core_v1.list_namespaced_pod(namespace, label_selector="app=web").items
    assert all(annotated(p).get(RANKED_BY) == "web" for p in web), costs
    (neighbour,) = core_v1.list_namespaced_pod(namespace, label_selector="app=neighbour").items
    neighbour_name = str(neighbour.metadata.name if neighbour.metadata else "")
    by_hand = {"metadata": {"annotations": {DELETION_COST: "7"}}}
    core_v1.patch_namespaced_pod(neighbour_name, namespace, by_hand)
    custom_objects.delete_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "web")

    def released() -> bool:
        found: Any = custom_objects.list_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL)
        return not found["items"]

    wait_for(released, timeout=60, what="the operator to release the deleted scaler")
    left = {
        p.metadata.name: ranking
        for p in core_v1.list_namespaced_pod(namespace).items
        if p.metadata and (ranking := annotated(p, DELETION_COST, RANKED_BY))
    }
    assert left == {neighbour_name: {DELETION_COST: "7"}}, left


def annotated(pod: client.V1Pod, *keys: str) -> dict[str, str]:
    """The pod's annotations (only ``keys`` when given)."""
    found = (pod.metadata.annotations if pod.metadata else None) or {}
    return {k: v for k, v in found.items() if not keys or k in keys}
