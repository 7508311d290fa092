"""The evictor against a fake API: stamps before evictions, put back when a PDB says no."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from predictive_scaler.operator.evictor import DRAINING_TAINT, REBALANCED_AT, Evictor, OptedIn
from predictive_scaler.operator.kube import TaintChange
from predictive_scaler.rebalancing.planner import Move, Plan, Skipped
from predictive_scaler.refs import NodeRef, PodRef, ScalerRef, WorkloadRef

pytestmark = pytest.mark.unit

COOLDOWN = 600.0
WEB = WorkloadRef("shop", "Deployment", "web")
SCALER = ScalerRef("shop", "web")


@dataclass
class FakeCluster:
    """Nodes with taints, what was written in order, and the pods a PDB protects."""

    taints: dict[str, list[client.V1Taint]] = field(default_factory=dict)
    protected: set[PodRef] = field(default_factory=set)
    calls: list[tuple[str, object]] = field(default_factory=list)
    annotations: dict[NodeRef | ScalerRef, str | None] = field(default_factory=dict)
    events: list[tuple[PodRef, str, str]] = field(default_factory=list)
    repeats: list[tuple[str, int]] = field(default_factory=list)
    gone: set[NodeRef | ScalerRef] = field(default_factory=set)

    def evict(self, pod: PodRef) -> None:
        self.calls.append(("evict", pod))
        if pod in self.protected:
            raise ApiException(status=429, reason="Too Many Requests")

    def annotate(self, target: NodeRef | ScalerRef, key: str, value: str | None) -> None:
        assert key == REBALANCED_AT
        self.calls.append(("annotate", target))
        if target in self.gone:
            raise ApiException(status=404, reason="Not Found")
        self.annotations[target] = value

    def update_taints(self, node: str, change: TaintChange) -> bool:
        wanted = change(list(self.taints.get(node, [])))
        if wanted is None:
            return False
        self.calls.append(("taint", node))
        self.taints[node] = wanted
        return True

    def post_event(self, pod: PodRef, kind: str, reason: str, message: str, component: str) -> str:
        self.events.append((pod, kind, reason))
        return f"event-{len(self.events)}"

    def repeat_event(self, namespace: str, name: str, count: int, message: str) -> bool:
        self.repeats.append((name, count))
        return True


def move(pod: str, source: str = "hot", destination: str = "cool") -> Move:
    return Move(PodRef("shop", pod), WEB, source, destination, 0.5)


def plan(*moves: Move, skipped: tuple[Skipped, ...] = ()) -> Plan:
    return Plan(tuple(moves), skipped, 1.0, 0.5, {}, {})


def nodes(*names: str) -> list[client.V1Node]:
    return [client.V1Node(metadata=client.V1ObjectMeta(name=n, annotations={})) for n in names]


OPTED = {WEB: OptedIn(SCALER, {})}


def test_a_move_taints_its_source_and_stamps_before_it_evicts() -> None:
    cluster = FakeCluster()
    report = Evictor(cluster, COOLDOWN).execute(plan(move("web-a")), OPTED, 1000.0, nodes())
    assert report.evicted == (PodRef("shop", "web-a"),)
    order = [kind for kind, _ in cluster.calls]
    assert order == ["taint", "annotate", "annotate", "annotate", "evict"]
    assert [t.key for t in cluster.taints["hot"]] == [DRAINING_TAINT]
    assert cluster.annotations == {
        NodeRef("hot"): "1000",
        NodeRef("cool"): "1000",
        SCALER: "1000/1000",
    }
    assert cluster.events == [(PodRef("shop", "web-a"), "Normal", "Evicted")]


def test_a_node_whose_every_move_a_pdb_refused_keeps_no_draining_taint() -> None:
    cluster = FakeCluster(protected={PodRef("shop", "web-a"), PodRef("shop", "web-b")})
    two = plan(move("web-a"), move("web-b"))
    report = Evictor(cluster, COOLDOWN).execute(two, OPTED, 1000.0, [])
    assert report.evicted == ()
    assert cluster.taints["hot"] == []


def test_a_move_refused_again_with_another_degree_counts_up_its_first_event() -> None:
    cluster = FakeCluster(protected={PodRef("shop", "web-a")})
    evictor = Evictor(cluster, COOLDOWN)
    for degree in (0.5, 0.4):
        refused = Move(PodRef("shop", "web-a"), WEB, "hot", "cool", degree)
        evictor.execute(plan(refused), OPTED, 1000.0, [])
    assert [reason for _, _, reason in cluster.events] == ["EvictionBlocked"]
    assert cluster.repeats == [("event-1", 2)]


def test_an_event_said_again_is_counted_not_posted_again() -> None:
    cluster = FakeCluster()
    evictor = Evictor(cluster, COOLDOWN)
    skipped = plan(skipped=(Skipped(PodRef("shop", "web-c"), "hot", "NoDestination"),))
    for _ in range(3):
        evictor.report_skipped(skipped)
    assert [reason for _, _, reason in cluster.events] == ["RebalanceSkipped"]
    assert cluster.repeats == [("event-1", 2), ("event-1", 3)]


def test_a_pdb_refusal_puts_the_stamps_back_and_the_next_move_extends_the_streak() -> None:
    cluster = FakeCluster(protected={PodRef("shop", "web-a")})
    evictor = Evictor(cluster, COOLDOWN)
    two = plan(move("web-a"), move("web-b", "warm", "cold"))
    report = evictor.execute(two, {WEB: OptedIn(SCALER, {REBALANCED_AT: "900/900"})}, 1000.0, [])
    assert report.blocked == (PodRef("shop", "web-a"),)
    assert report.evicted == (PodRef("shop", "web-b"),)
    # web-a's stamps are undone (hot and cool were unstamped before), web-b's stand.
    assert cluster.annotations[NodeRef("hot")] is None
    assert cluster.annotations[NodeRef("warm")] == "1000"
    assert cluster.annotations[SCALER] == "900/1000"  # the streak from before goes on
    assert (PodRef("shop", "web-a"), "Normal", "EvictionBlocked") in cluster.events


def test_dry_run_says_what_it_would_do_and_changes_nothing() -> None:
    cluster = FakeCluster()
    skipped = (
        Skipped(PodRef("shop", "web-c"), "hot", "CoolDown"),
        Skipped(PodRef("shop", "ds"), "hot", "DaemonSetPod"),
    )
    evictor = Evictor(cluster, COOLDOWN)
    evictor.dry_run(plan(move("web-a"), skipped=skipped))
    evictor.report_skipped(plan(move("web-a"), skipped=skipped))
    assert cluster.calls == []
    assert [reason for _, _, reason in cluster.events] == ["WouldEvict", "RebalanceSkipped"]


def test_the_taint_is_lifted_once_the_node_has_left_the_high_load_heap() -> None:
    draining = client.V1Taint(key=DRAINING_TAINT, effect="PreferNoSchedule", value="true")
    other = client.V1Taint(key="dedicated", effect="NoSchedule", value="gpu")
    listed = [
        client.V1Node(
            metadata=client.V1ObjectMeta(name=name),
            spec=client.V1NodeSpec(taints=[draining, other]),
        )
        for name in ("still-hot", "cooled")
    ]
    cluster = FakeCluster(taints={name: [draining, other] for name in ("still-hot", "cooled")})
    Evictor(cluster, COOLDOWN).lift_taints(listed, still_hot={"still-hot"})
    assert cluster.taints == {"still-hot": [draining, other], "cooled": [other]}


def test_a_move_whose_scaler_is_gone_fails_alone_and_puts_its_node_stamps_back() -> None:
    # The PredictiveScaler deleted between the plan and the move: its stamp gets a 404.
    shop = WorkloadRef("shop", "Deployment", "shop")
    opted = {**OPTED, shop: OptedIn(ScalerRef("shop", "gone"), {})}
    cluster = FakeCluster(gone={ScalerRef("shop", "gone")})
    first = Move(PodRef("shop", "shop-a"), shop, "hot", "cool", 0.5)
    report = Evictor(cluster, COOLDOWN).execute(
        plan(first, move("web-a", source="warm", destination="cooler")),
        OPTED | opted,
        1000.0,
        nodes(),
    )
    assert report.blocked == (PodRef("shop", "shop-a"),)
    assert report.evicted == (PodRef("shop", "web-a"),)
    assert cluster.annotations[NodeRef("hot")] is None
    assert cluster.annotations[NodeRef("cool")] is None
    assert ("evict", PodRef("shop", "shop-a")) not in cluster.calls
    assert "EvictionFailed" in [reason for _, _, reason in cluster.events]
