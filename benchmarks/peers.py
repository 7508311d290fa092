"""The rebalancer against the real descheduler, each on its own copy of the same skewed cluster.

    python -m benchmarks.peers [--sizes 6,12,24] [--cycles 5]      (make bench-peers)

For every size, two local clusters are built one after the other, the same way
(`benchmarks.peers_cluster`: workloads from the Google per-VM trace, crowded
onto a third of the nodes, a PodDisruptionBudget of one each). On the first,
descheduler v0.36 runs LowNodeUtilization on actual usage from metrics-server
with deviation thresholds of 10 % (its documentation's recommendation for
actual usage); on the second, predictive-scaler's rebalancer runs with its
defaults on Prometheus's usage. Both have the same eviction limits (per node,
per cycle) and run `--cycles` times, a rebalancer settle and a scrape apart
(three rate windows and one scrape of the cluster's interval); after each
cycle the benchmark also waits until the replacements run and both metric
paths read every node as its pods add up to. Scored on that ground truth,
with the same node score for both: the balance degree (standard deviation of
node scores) before and after, evictions, the evictions until the degree
was halved and until it reached the other tool's end degree (both counted
at the end of a cycle: the same balance for fewer evictions), pods moved
more than once (ping-pong), workloads that had more
than one pod unavailable at once (PDB violations), replacements that landed
on a node overutilised when the cycle began, and time per cycle.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubernetes import client

import predictive_scaler_dev.localcluster as local
from benchmarks.peers_cluster import (
    AGENT_NAMESPACE,
    NAMESPACE,
    NODE_CORES,
    NODE_GIB,
    PODS_PER_NODE,
    REPLICAS,
    SkewedCluster,
    node_truth,
    workloads,
)
from benchmarks.report import machine_description, table, write_section
from predictive_scaler.operator.rebalancer import Rebalancer
from predictive_scaler.operator.resource import GROUP, KIND, PLURAL, VERSION
from predictive_scaler.operator.settings import OperatorSettings
from predictive_scaler.rebalancing.nodes import NodeLoad, ScoringConfig, balance_degree, scores
from predictive_scaler_dev.demo.session import apply_crds, mark_evaluated
from predictive_scaler_dev.localcluster.kube import NodeShape

DESCHEDULER, OURS = "descheduler", "predictive-scaler"
PER_NODE, PER_CYCLE = 2, 10  # evictions, for both tools
DEVIATION_PERCENT = 10
SCORING = ScoringConfig(weights={"cpu": 1.0, "memory": 1.0})
DESCHEDULER_TIMEOUT = 120.0


@dataclass
class ToolRun:
    tool: str
    nodes: int
    pods: int
    degree_before: float = 0.0
    degree_after: float = 0.0
    evictions: int = 0
    # After each cycle: the evictions so far and the degree it left.
    trajectory: list[tuple[int, float]] = field(default_factory=list)
    ping_pong: int = 0
    pdb_violations: int = 0
    landed_hot: int = 0
    cycle_seconds: list[float] = field(default_factory=list)

    def evictions_to_reach(self, degree: float) -> int | None:
        """Evictions up to the end of the first cycle that left ``degree`` or less."""
        return next((done for done, left in self.trajectory if left <= degree), None)

    @property
    def evictions_to_half(self) -> int | None:
        return self.evictions_to_reach(self.degree_before / 2)


def descheduler_policy() -> dict[str, Any]:
    thresholds = {"cpu": DEVIATION_PERCENT, "memory": DEVIATION_PERCENT}
    return {
        "apiVersion": "descheduler/v1alpha2",
        "kind": "DeschedulerPolicy",
        "maxNoOfPodsToEvictPerNode": PER_NODE,
        "maxNoOfPodsToEvictTotal": PER_CYCLE,
        "metricsProviders": [{"source": "KubernetesMetrics"}],
        "profiles": [
            {
                "name": "peers",
                "pluginConfig": [
                    {"name": "DefaultEvictor", "args": {"nodeFit": True}},
                    {
                        "name": "LowNodeUtilization",
                        "args": {
                            "useDeviationThresholds": True,
                            "thresholds": thresholds,
                            "targetThresholds": thresholds,
                            "metricsUtilization": {"source": "KubernetesMetrics"},
                            "evictableNamespaces": {"exclude": [AGENT_NAMESPACE, "kube-system"]},
                        },
                    },
                ],
                "plugins": {"balance": {"enabled": ["LowNodeUtilization"]}},
            }
        ],
    }


def _loads(truth: dict[str, tuple[float, float]], nodes: list[str]) -> list[NodeLoad]:
    capacity = {"cpu": NODE_CORES, "memory": NODE_GIB}
    return [
        NodeLoad(n, capacity, dict(zip(("cpu", "memory"), truth.get(n, (0.0, 0.0)), strict=True)))
        for n in nodes
    ]


def _overutilised(loads: list[NodeLoad]) -> set[str]:
    def used(load: NodeLoad) -> float:
        return max(load.utilisation("cpu"), load.utilisation("memory"))

    mean = statistics.fmean(used(load) for load in loads)
    return {load.name for load in loads if used(load) > mean + DEVIATION_PERCENT / 100}


def _placements(core: client.CoreV1Api) -> dict[str, str]:
    return {
        str(p.metadata.name): str(p.spec.node_name)
        for p in core.list_namespaced_pod(NAMESPACE).items
        if p.metadata and p.spec and p.metadata.deletion_timestamp is None
    }


@dataclass
class UnavailableWatch:
    """Polls the workloads while a cycle runs: the most pods each had unavailable at once."""

    apps: client.AppsV1Api
    worst: dict[str, int] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)

    def __enter__(self) -> UnavailableWatch:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        while not self._stop.wait(0.25):
            for item in self.apps.list_namespaced_deployment(NAMESPACE).items:
                wanted = item.spec.replicas if item.spec else 0
                available = (item.status.available_replicas if item.status else 0) or 0
                name = str(item.metadata.name) if item.metadata else ""
                self.worst[name] = max(self.worst.get(name, 0), (wanted or 0) - available)


def _descheduler_cycle(skewed: SkewedCluster, folder: Path) -> Callable[[], None]:
    policy = folder / "descheduler-policy.json"
    policy.write_text(json.dumps(descheduler_policy(), indent=2))
    cluster = skewed.cluster
    command = [
        str(cluster.binaries.descheduler),
        f"--policy-config-file={policy}",
        f"--kubeconfig={cluster.kubeconfig}",
        "--secure-port=0",  # one run, nothing to serve
        "--v=2",
    ]

    def run() -> None:
        # Without --descheduling-interval it runs the policy once and exits.
        log = folder / "descheduler.log"
        with log.open("a") as out:
            done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, check=False,
                                  timeout=DESCHEDULER_TIMEOUT)  # fmt: skip
        if done.returncode != 0:
            tail = "\n".join(log.read_text().splitlines()[-15:])
            raise RuntimeError(f"descheduler exited with {done.returncode}:\n{tail}")

    return run


def rebalancer_settings(skewed: SkewedCluster) -> OperatorSettings:
    """The rebalancer's defaults on this cluster's scrape interval, with the shared limits."""
    return OperatorSettings.from_environment(
        {
            "PROMETHEUS_URL": skewed.cluster.prometheus_url,
            "PREDICTIVE_SCALER_NAMESPACES": NAMESPACE,
            "PREDICTIVE_SCALER_SCRAPE_INTERVAL": f"{skewed.cluster.scrape_interval_seconds:g}s",
            "PREDICTIVE_SCALER_REBALANCE_MODE": "Auto",
            "PREDICTIVE_SCALER_REBALANCE_PER_NODE": str(PER_NODE),
            "PREDICTIVE_SCALER_REBALANCE_BUDGET": str(PER_CYCLE),
        }
    )


def _rebalancer_cycle(skewed: SkewedCluster) -> Callable[[], None]:
    apply_crds(skewed.cluster)
    custom = client.CustomObjectsApi(skewed.api)
    for workload in skewed.specs:
        # Opted in; no operator runs here, so nothing scales them.
        body = {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": KIND,
            "metadata": {"name": workload.name},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                   "name": workload.name},
                "minReplicas": REPLICAS,
                "maxReplicas": REPLICAS,
                "metric": {"resource": "cpu", "targetPerReplica": "1"},
                "scaling": {"mode": "DryRun"},
                "rebalance": {"enabled": True},
            },
        }  # fmt: skip
        custom.create_namespaced_custom_object(GROUP, VERSION, NAMESPACE, PLURAL, body)
        mark_evaluated(custom, NAMESPACE, workload.name)
    rebalancer = Rebalancer.from_settings(skewed.api, rebalancer_settings(skewed))

    def run() -> None:
        rebalancer.cycle(time.time())

    return run


def run_tool(tool: str, size: int, cycles: int, folder: Path) -> ToolRun:
    config = local.ClusterConfig(
        run_dir=folder / "cluster", nodes=size, node_shape=NodeShape(cpu="16", memory="64Gi")
    )
    started = local.up(config)
    skewed = SkewedCluster(started.cluster, started.cluster.api(), workloads(size, seed=size))
    result = ToolRun(tool, size, len(skewed.specs) * REPLICAS)
    try:
        core = skewed.core
        nodes = sorted(
            str(n.metadata.name) for n in core.list_node().items if n.metadata is not None
        )
        skewed.build(nodes)
        skewed.settle()
        result.degree_before = balance_degree(
            scores(_loads(node_truth(core, skewed.usage), nodes), SCORING)
        )
        cycle = (
            _descheduler_cycle(skewed, folder) if tool == DESCHEDULER else _rebalancer_cycle(skewed)
        )
        original = set(_placements(core))
        moved: set[str] = set()
        # Cycles are spaced as the operator spaces its moves on this scrape
        # interval (its settle), for both tools alike: five cycles back to back
        # would be seconds of a real cluster's minutes. One scrape more, so that
        # a cycle is not held by a stamp's rounding to the second.
        settings = rebalancer_settings(skewed)
        spacing = settings.rebalance_settle_seconds + settings.scrape_interval
        next_cycle = time.monotonic()
        for number in range(cycles):
            time.sleep(max(0.0, next_cycle - time.monotonic()))
            next_cycle = time.monotonic() + spacing
            hot = _overutilised(_loads(node_truth(core, skewed.usage), nodes))
            before = _placements(core)
            with UnavailableWatch(client.AppsV1Api(skewed.api)) as watch:
                began = time.monotonic()
                cycle()
                result.cycle_seconds.append(time.monotonic() - began)
                skewed.settle()
            after = _placements(core)
            evicted = set(before) - set(after)
            new = set(after) - set(before)
            result.evictions += len(evicted)
            result.ping_pong += len(evicted & moved)
            moved |= new - original
            result.landed_hot += sum(1 for pod in new if after[pod] in hot)
            result.pdb_violations += sum(1 for worst in watch.worst.values() if worst > 1)
            result.degree_after = balance_degree(
                scores(_loads(node_truth(core, skewed.usage), nodes), SCORING)
            )
            result.trajectory.append((result.evictions, result.degree_after))
            print(
                f"    {tool} cycle {number + 1}: {len(evicted)} evicted, "
                f"degree {result.degree_after:.3f}",
                flush=True,
            )
    finally:
        skewed.stop()
        skewed.api.close()  # type: ignore[no-untyped-call]
        local.down(config.run_dir)
    return result


def _evictions(count: int | None) -> str:
    return "not reached" if count is None else str(count)


def _row(run: ToolRun, other: ToolRun | None = None) -> list[str]:
    """One tool's row; `other` is the other tool on the same cluster, whose end it is held to."""
    change = 1 - run.degree_after / run.degree_before if run.degree_before else 0.0
    return [
        f"{run.nodes} nodes, {run.pods} pods",
        run.tool,
        f"{run.degree_before:.3f} -> {run.degree_after:.3f} ({change:.0%} lower)",
        str(run.evictions),
        _evictions(run.evictions_to_half),
        "-" if other is None else _evictions(run.evictions_to_reach(other.degree_after)),
        str(run.ping_pong),
        str(run.pdb_violations),
        str(run.landed_hot),
        f"{statistics.median(run.cycle_seconds):.2f} s" if run.cycle_seconds else "-",
    ]


def _peer_on_the_same_cluster(run: ToolRun, runs: list[ToolRun]) -> ToolRun | None:
    """The other tool's run on a cluster of the same size, whose end degree ``run`` chases."""
    return next((o for o in runs if o.nodes == run.nodes and o.tool != run.tool), None)


def report(runs: list[ToolRun], cycles: int) -> str:
    header = [
        "cluster", "tool", "balance degree before -> after", "evictions",
        "evictions until the degree was halved",
        "evictions until the other's end degree", "ping-pong",
        "PDB violations", "landed on hot nodes", "time per cycle (median)",
    ]  # fmt: skip
    lines = [
        "## The rebalancer against the real descheduler (`benchmarks/peers.py`)",
        "",
        f"- Machine: {machine_description()}",
        f"- Reproduce: `.venv/bin/python -m benchmarks.peers --cycles {cycles}` "
        "(`make bench-peers`)",
        f"- Each tool on its own copy of the cluster, {cycles} cycles a rebalancer settle "
        "and a scrape apart (three rate windows and one scrape), "
        f"at most {PER_NODE} evictions per node and {PER_CYCLE} per cycle; "
        f"workloads of {REPLICAS} pods "
        f"({PODS_PER_NODE} per node on average) crowded onto a third of the nodes; "
        f"descheduler v0.36 LowNodeUtilization on metrics-server usage, deviation thresholds "
        f"{DEVIATION_PERCENT} %; predictive-scaler's rebalancer with its defaults on Prometheus.",
        "",
        *table(header, [_row(run, _peer_on_the_same_cluster(run, runs)) for run in runs]),
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="6,12,24", help="node counts, commas")
    parser.add_argument("--cycles", type=int, default=5)
    parser.add_argument("--output", type=Path, default=Path("BENCHMARKS.md"))
    args = parser.parse_args(argv)
    runs = []
    with tempfile.TemporaryDirectory(prefix="peers-") as scratch:
        for size in (int(s) for s in args.sizes.split(",")):
            for tool in (DESCHEDULER, OURS):
                print(f"==> {size} nodes: {tool}", flush=True)
                folder = Path(scratch) / f"{size}-{tool}"
                folder.mkdir()
                runs.append(run_tool(tool, size, args.cycles, folder))
                print("    " + " | ".join(_row(runs[-1])), flush=True)
    section = report(runs, args.cycles)
    print(section)
    write_section(args.output, "peers", section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
