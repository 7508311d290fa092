"""The operator dies at the worst moments of a cycle, life after life.

Failpoints (`PREDICTIVE_SCALER_FAILPOINTS`) make the real process exit between
a decision and its record, as a SIGKILL there would; each test restarts it
until the work is done and checks what the cluster went through meanwhile.

Nothing here waits on the machine being quick: what the cluster went through is
watched by a thread of its own, whatever the test is doing (starting a life can
take long on a busy machine, and the operator acts during its start), and "done"
is counted in the operator's own rebalancing cycles, not in seconds.
"""

from __future__ import annotations

import itertools
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field

import pytest
from kubernetes import client

from predictive_scaler.operator import failpoints
from predictive_scaler.operator.resource import GROUP, PLURAL, VERSION
from predictive_scaler_dev.demo.load import LoadDriver
from predictive_scaler_dev.demo.process import OperatorExitedError, OperatorProcess
from predictive_scaler_dev.localcluster import NodeShape
from predictive_scaler_dev.localcluster.kube import running_pods
from predictive_scaler_dev.localcluster.waiting import wait_until
from tests.e2e.test_operator_faults import create, fast_scaler
from tests.fixtures.cluster import (
    KwokNodes,
    PrometheusQuery,
    create_deployment,
    pinned_deployment,
    wait_for,
)
from tests.fixtures.operator import StartOperator, replicas, samples, scaler

PERIOD = 15  # the scale-up policy: at most one pod per 15 s
REBALANCE_INTERVAL = 3  # seconds
# A life that runs this many rebalancing cycles without evicting has nothing left
# to move: more than the seconds the usage of a moved pod takes to reach
# Prometheus (scrape 2 s, rate window 8 s) at one cycle per interval.
QUIET_CYCLES = 8
# Failure deadlines, never waits: a life ends at its first eviction or after its
# quiet cycles; a generous bound keeps a hang from running forever.
LIFE_TIMEOUT = 180.0


@dataclass
class Lives:
    """Runs the operator again each time it dies, until `done` or `count` lives."""

    start: StartOperator
    env: dict[str, str]
    crashes: int = 0
    ended: list[int | None] = field(default_factory=list)
    current: OperatorProcess | None = None

    def live(self, done: Callable[[], bool], *, count: int, life_timeout: float) -> None:
        """Lives until one sees the work `done` (then it is stopped) or `count` have died."""
        for _ in range(count):
            if done():
                return
            try:
                operator = self.start(self.env)
            except OperatorExitedError:
                self.crashes += 1  # died before its liveness endpoint answered
                continue
            self.current = operator
            try:
                wait_until(
                    lambda op=operator: not op.running() or done(),  # type: ignore[misc]
                    timeout=life_timeout,
                    what="the operator to crash at a failpoint or finish",
                )
            except TimeoutError as error:
                pytest.fail(f"{error} (life {len(self.ended) + 1}):\n{operator.log_tail(80)}")
            if operator.running():
                operator.stop()
                self.ended.append(None)
                return
            self._crashed(operator)

    def _crashed(self, operator: OperatorProcess) -> None:
        assert operator.process is not None
        code = operator.process.returncode
        assert code == failpoints.EXIT_CODE, f"died otherwise ({code}):\n{operator.log_tail()}"
        self.crashes += 1
        self.ended.append(code)


@contextmanager
def watched(read: Callable[[], int], every: float = 0.1) -> Iterator[list[tuple[float, int]]]:
    """(time seen, value) at every change of `read()`, polled by a thread of its own.

    A failed read ends the watch and is raised when the block ends.
    """
    seen: list[tuple[float, int]] = []
    failed: list[Exception] = []
    stop = threading.Event()

    def poll() -> None:
        while not stop.is_set():
            try:
                now = read()
            except Exception as error:  # noqa: BLE001 - handed to the test below
                failed.append(error)
                return
            if not seen or seen[-1][1] != now:
                seen.append((time.monotonic(), now))
            stop.wait(every)

    thread = threading.Thread(target=poll, daemon=True)
    thread.start()
    try:
        yield seen
    finally:
        stop.set()
        thread.join()
    if failed:
        raise failed[0]


def test_crashes_around_the_scale_patch_lose_no_cool_down_and_never_oscillate(
    start_operator: StartOperator,
    custom_objects: client.CustomObjectsApi,
    apps_v1: client.AppsV1Api,
    core_v1: client.CoreV1Api,
    namespace: str,
) -> None:
    create_deployment(apps_v1, namespace, "web", 2, cpu_request="1")
    with LoadDriver(core_v1, apps_v1, namespace, "web", lambda _: 4.0):
        body = fast_scaler("web", "web")
        body["spec"]["maxReplicas"] = 6
        body["spec"]["scaling"]["behavior"] = {
            "scaleUp": {
                "stabilizationWindowSeconds": 0,
                "policies": [{"type": "Pods", "value": 1, "periodSeconds": PERIOD}],
            }
        }
        create(custom_objects, namespace, body)

        # Every scale dies: before the patch half the time (the intent is
        # recorded, nothing patched), else right after it (patched, not recorded).
        lives = Lives(
            start_operator,
            {
                "PREDICTIVE_SCALER_REBALANCE_MODE": "Off",
                "PREDICTIVE_SCALER_FAILPOINTS": "scale:before-patch=0.5,scale:after-patch=1",
            },
        )
        with watched(lambda: replicas(apps_v1, namespace, "web")) as seen:

            def reached_max() -> bool:
                # Every patch is followed by a failpoint exit: the patch to 6 can be
                # seen before its process has exited, and a life stopped then would
                # end without the crash the last scale-up owes. The count is read, not
                # taken from the watcher: the patch and the exit can both come before
                # its next poll, and a life started then holds 6 and never crashes.
                last = lives.current
                exited = last is None or not last.running()
                return exited and replicas(apps_v1, namespace, "web") == 6

            # Each life patches with probability 1/2 (the other half die before the
            # patch): four patches within 32 lives fail to come once in 10^6 runs
            # (within 16, once in a hundred).
            lives.live(reached_max, count=32, life_timeout=PERIOD * 3 + 60)
            if replicas(apps_v1, namespace, "web") == 6:
                wait_for(
                    lambda: bool(seen) and seen[-1][1] == 6,
                    timeout=30,
                    what="the watcher to see the last scale-up",
                )

    assert seen[-1][1] == 6, f"stopped at {seen[-1][1]} after {lives.crashes} crashes"
    assert lives.crashes >= 4, "each of the four scale-ups should have crashed once at least"
    steps = [(b[0] - a[0], b[1] - a[1]) for a, b in itertools.pairwise(seen)]
    assert all(delta == 1 for _, delta in steps), f"not one pod at a time, or down: {seen}"
    # The watcher sees a change up to a poll and a read late: one second of slack.
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
    with ExitStack() as stack:
        for name in workloads:
            stack.enter_context(LoadDriver(core_v1, apps_v1, namespace, name, lambda _: 5.0))
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
        # Evictions seen when each life began: a life that evicts dies at the failpoint.
        evicted_before: dict[int, int] = {}

        def settled() -> bool:
            """Nothing left to move: the running life's quiet cycles came and went, no eviction."""
            track()
            operator = lives.current
            if operator is None or not operator.running():
                return False
            before = evicted_before.setdefault(id(operator), len(evicted))
            try:
                cycles = samples(operator, "predictive_scaler_rebalance_duration_seconds_count")
            except OSError:
                return False  # its endpoint is going with it
            return len(evicted) == before and cycles.get((), 0.0) >= QUIET_CYCLES

        lives = Lives(
            start_operator,
            {
                "PREDICTIVE_SCALER_REBALANCE_MODE": "Auto",
                "PREDICTIVE_SCALER_REBALANCE_INTERVAL": f"{REBALANCE_INTERVAL}s",
                "PREDICTIVE_SCALER_REBALANCE_COOLDOWN": "600s",
                "PREDICTIVE_SCALER_REBALANCE_SETTLE": "600s",
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
        lives.live(settled, count=8, life_timeout=LIFE_TIMEOUT)
    track()

    assert lives.crashes >= 2, f"the failpoints were hardly reached: {lives.ended}"
    assert len(evicted) >= 2, f"too few moves to tell anything: {evicted}"
    moved_workloads = [workload for workload, _ in evicted]
    sources = [node for _, node in evicted]
    assert len(set(moved_workloads)) == len(moved_workloads), f"a workload moved twice: {evicted}"
    assert len(set(sources)) == len(sources), f"a node drained twice in its cool-down: {evicted}"
    assert set(sources) <= set(hot)
