"""The operator dies at the worst moments of a cycle, life after life.

Failpoints (`PREDICTIVE_SCALER_FAILPOINTS`) make the real process exit between
a decision and its record, as a SIGKILL there would; each test restarts it
until the work is done and checks what the cluster went through meanwhile.
"""

from __future__ import annotations

import itertools
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from kubernetes import client

from predictive_scaler.demo.load import LoadDriver
from predictive_scaler.demo.process import OperatorExitedError, OperatorProcess
from predictive_scaler.localcluster import NodeShape
from predictive_scaler.localcluster.kube import running_pods
from predictive_scaler.operator import failpoints
from predictive_scaler.operator.resource import GROUP, PLURAL, VERSION
from tests.e2e.test_operator_faults import create, fast_scaler
from tests.fixtures.cluster import (
    KwokNodes,
    PrometheusQuery,
    create_deployment,
    pinned_deployment,
    wait_for,
)
from tests.fixtures.operator import StartOperator, replicas, scaler

PERIOD = 15  # the scale-up policy: at most one pod per 15 s


@dataclass
class Lives:
    """Runs the operator again each time it dies, until `done` or `count` lives."""

    start: StartOperator
    env: dict[str, str]
    crashes: int = 0
    ended: list[int | None] = field(default_factory=list)

    def live(self, done: Callable[[], bool], *, count: int, life_timeout: float) -> None:
        for _ in range(count):
            if done():
                return
            try:
                operator = self.start(self.env)
            except OperatorExitedError:
                self.crashes += 1  # died before its liveness endpoint answered
                continue
            wait_for(
                lambda op=operator: not op.running() or done(),  # type: ignore[misc]
                timeout=life_timeout,
                what="the operator to crash at a failpoint or finish",
            )
            self._ended(operator)

    def _ended(self, operator: OperatorProcess) -> None:
        if operator.running():
            operator.stop()
            self.ended.append(None)
            return
        assert operator.process is not None
        code = operator.process.returncode
        assert code == failpoints.EXIT_CODE, f"died otherwise ({code}):\n{operator.log_tail()}"
        self.crashes += 1
        self.ended.append(code)


def test_crashes_around_the_scale_patch_lose_no_cool_down_and_never_oscillate(
    start_operator: StartOperator,
    custom_objects: client.CustomObjectsApi,
    apps_v1: client.AppsV1Api,
    core_v1: client.CoreV1Api,
    namespace: str,
) -> None:
    create_deployment(apps_v1, namespace, "web", 2, cpu_request="1")
    driver = LoadDriver(core_v1, apps_v1, namespace, "web", lambda _: 4.0)
    driver.start()
    body = fast_scaler("web", "web")
    body["spec"]["maxReplicas"] = 6
    body["spec"]["scaling"]["behavior"] = {
        "scaleUp": {
            "stabilizationWindowSeconds": 0,
            "policies": [{"type": "Pods", "value": 1, "periodSeconds": PERIOD}],
        }
    }
    create(custom_objects, namespace, body)
    seen: list[tuple[float, int]] = []

    def reached_max() -> bool:
        now = replicas(apps_v1, namespace, "web")
        if not seen or seen[-1][1] != now:
            seen.append((time.monotonic(), now))
        return now == 6

    # Every scale dies: before the patch half the time (the intent is
    # recorded, nothing patched), else right after it (patched, not recorded).
    lives = Lives(
        start_operator,
        {
            "PREDICTIVE_SCALER_REBALANCE_MODE": "Off",
            "PREDICTIVE_SCALER_FAILPOINTS": "scale:before-patch=0.5,scale:after-patch=1",
        },
    )
    try:
        lives.live(reached_max, count=16, life_timeout=PERIOD * 3 + 60)
    finally:
        driver.stop()

    assert reached_max(), f"stopped at {seen[-1][1]} after {lives.crashes} crashes"
    assert lives.crashes >= 4, "each of the four scale-ups should have crashed once at least"
    steps = [(b[0] - a[0], b[1] - a[1]) for a, b in itertools.pairwise(seen)]
    assert all(delta == 1 for _, delta in steps), f"not one pod at a time, or down: {seen}"
    # Polling sees a change up to a poll late or early: one second of slack.
    assert all(gap >= PERIOD - 1 for gap, _ in steps[1:]), f"a cool-down was lost: {steps}"


def test_crashes_around_an_eviction_never_move_a_workload_or_node_twice(
    start_operator: StartOperator,
    kwok_nodes: KwokNodes,
    core_v1: client.CoreV1Api,
    apps_v1: client.AppsV1Api,
    custom_objects: client.CustomObjectsApi,
    namespace: str,
    prometheus_query: PrometheusQuery,
) -> None:
    pool = f"pool-{uuid.uuid4().hex[:6]}"
    shape = NodeShape(cpu="8", memory="32Gi", labels={"pool": pool})
    hot = kwok_nodes.create(shape, count=2)
    workloads = ("w0", "w1", "w2")
    for name in workloads:
        apps_v1.create_namespaced_deployment(namespace, pinned_deployment(name, 2, pool))  # type: ignore[arg-type]
    wait_for(
        lambda: all(len(running_pods(core_v1, namespace, w)) == 2 for w in workloads),
        what="pods Running on the hot nodes",
    )
    drivers = [LoadDriver(core_v1, apps_v1, namespace, w, lambda _: 5.0) for w in workloads]
    for driver in drivers:
        driver.start()
    # Three cool nodes: a replacement pod need not land where the plan meant.
    cool = kwok_nodes.create(shape, count=3)
    for name in workloads:
        body = scaler(name, name, metric={"resource": "cpu", "targetPerReplica": "1"})
        body["spec"]["scaling"]["mode"] = "DryRun"
        body["spec"]["rebalance"] = {"enabled": True}
        custom_objects.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, body)
    prometheus_query(
        f'rate(node_cpu_usage_seconds_total{{node=~"{"|".join(hot + cool)}"}}[8s])',
        lambda found: (
            len(found) == 5 and min(s.value for s in found if s.labels["node"] in hot) > 4
        ),
    )

    # Pod name -> (workload, node) as last seen; a pod that goes is an eviction:
    # nothing else in this namespace deletes pods.
    alive: dict[str, tuple[str, str]] = {}
    evicted: list[tuple[str, str]] = []

    def track() -> None:
        now = {}
        for workload in workloads:
            for pod in running_pods(core_v1, namespace, workload):
                if pod.metadata and pod.spec and not pod.metadata.deletion_timestamp:
                    now[str(pod.metadata.name)] = (workload, str(pod.spec.node_name))
        evicted.extend(where for name, where in alive.items() if name not in now)
        alive.clear()
        alive.update(now)

    track()
    quiet_since = [time.monotonic()]

    def settled() -> bool:
        """Nothing left to move: no eviction for ten cycles of this life."""
        before = len(evicted)
        track()
        if len(evicted) != before:
            quiet_since[0] = time.monotonic()
        return time.monotonic() - quiet_since[0] > 30

    lives = Lives(
        start_operator,
        {
            "PREDICTIVE_SCALER_REBALANCE_MODE": "Auto",
            "PREDICTIVE_SCALER_REBALANCE_INTERVAL": "3s",
            "PREDICTIVE_SCALER_REBALANCE_COOLDOWN": "600s",
            "PREDICTIVE_SCALER_REBALANCE_BUDGET": "3",
            "PREDICTIVE_SCALER_REBALANCE_PER_NODE": "2",
            "PREDICTIVE_SCALER_REBALANCE_PER_WORKLOAD": "1",
            "PREDICTIVE_SCALER_REBALANCE_WEIGHTS": "cpu=1",
            "PREDICTIVE_SCALER_REBALANCE_NODES": f"pool={pool}",
            # Stamps are written before the eviction, so a crash before it can only
            # cost a cool-down; right after it is where a move could be repeated.
            "PREDICTIVE_SCALER_FAILPOINTS": "evict:after=1",
        },
    )
    try:
        lives.live(settled, count=8, life_timeout=60)
    finally:
        for driver in drivers:
            driver.stop()
    track()

    assert lives.crashes >= 2, f"the failpoints were hardly reached: {lives.ended}"
    assert len(evicted) >= 2, f"too few moves to tell anything: {evicted}"
    moved_workloads = [workload for workload, _ in evicted]
    sources = [node for _, node in evicted]
    assert len(set(moved_workloads)) == len(moved_workloads), f"a workload moved twice: {evicted}"
    assert len(set(sources)) == len(sources), f"a node drained twice in its cool-down: {evicted}"
    assert set(sources) <= set(hot)
