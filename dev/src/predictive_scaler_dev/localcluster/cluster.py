"""`up`, `down` and `status` of the local control plane.

`up` starts etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok,
Prometheus, metrics-server and KEDA (operator, then metrics adapter) on free
loopback ports, in that order, waiting for each to be healthy before the next
needs it. Every started process is written to the run
state at once, so `down` can stop exactly those, even after an `up` that failed
half-way. A lock beside the run directory keeps two `up`s from racing, and an
`up` that finds a live cluster reuses it instead of starting a second one.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kubernetes import client

from predictive_scaler_dev.localcluster import configs, keda, metrics_server, processes
from predictive_scaler_dev.localcluster.build import binaries, build_all
from predictive_scaler_dev.localcluster.certs import (
    ADMIN,
    CONTROLLER_MANAGER,
    KEDA,
    METRICS_SERVER,
    SCHEDULER,
    kubeconfig,
    write_pki,
)
from predictive_scaler_dev.localcluster.components import Binaries
from predictive_scaler_dev.localcluster.health import COMPONENTS, COMPONENTS_BY_NAME, Component
from predictive_scaler_dev.localcluster.kube import (
    api_client,
    create_kwok_node,
    is_ready,
    wait_nodes_ready,
)
from predictive_scaler_dev.localcluster.layout import Layout, Ports
from predictive_scaler_dev.localcluster.processes import StartedProcess, Stopped
from predictive_scaler_dev.localcluster.prometheus import query_until
from predictive_scaler_dev.localcluster.state import (
    NODE_NAME_PREFIX,
    ClusterConfig,
    ClusterError,
    ClusterState,
    LocalCluster,
    Phase,
    UpResult,
    allocate_ports,
    connect,
    default_run_dir,
    locked,
    read_state,
    write_state,
)

log = logging.getLogger(__name__)


def up(config: ClusterConfig | None = None) -> UpResult:
    config = config or ClusterConfig()
    started = time.monotonic()
    with locked(config.run_dir):
        live = connect(config.run_dir)
        if live is not None:
            return UpResult(live, reused=True, seconds=time.monotonic() - started)
        _stop_and_remove(config.run_dir)
        report = build_all()
        cluster = _start(config, binaries())
    return UpResult(cluster, reused=False, seconds=time.monotonic() - started, build=report)


def _start(config: ClusterConfig, bins: Binaries) -> LocalCluster:
    missing = bins.missing()
    if missing:
        raise ClusterError(f"binaries missing, run `build` first: {', '.join(map(str, missing))}")
    layout = Layout(config.run_dir)
    layout.run_dir.mkdir(parents=True)
    ports = allocate_ports()
    state = ClusterState(phase=Phase.STARTING, ports=ports)
    write_state(layout, state)
    cluster = LocalCluster(config.run_dir, ports, bins)
    began = time.monotonic()
    try:
        _write_files(config, layout, ports, bins)
        for component in COMPONENTS:
            if component.name == "prometheus":
                # Nodes are created before Prometheus starts, so its first
                # service discovery already lists them; they turn Ready meanwhile.
                state = state.model_copy(update={"nodes": _create_nodes(cluster, config)})
            if component.name == "metrics-server":
                with cluster.api() as api:
                    metrics_server.register(api, layout.pki, ports.metrics_server)
            if component.name == "keda-operator":
                with cluster.api() as api:
                    keda.register(
                        api,
                        bins.keda_release_files(),
                        layout.pki,
                        ports.keda_adapter,
                        timeout=config.timeout_seconds,
                    )
            state = state.with_process(_launch(component, config, layout, ports, bins))
            write_state(layout, state)
            process = next(p for p in state.processes if p.name == component.name)
            processes.wait_healthy(
                process,
                lambda c=component: c.healthy(layout, ports),  # type: ignore[misc]
                timeout=config.timeout_seconds,
            )
            log.info("%-24s healthy after %.1f s", component.name, time.monotonic() - began)
        with cluster.api() as api:
            wait_nodes_ready(client.CoreV1Api(api), state.nodes, timeout=config.timeout_seconds)
        log.info("%-24s Ready after %.1f s", f"{config.nodes} kwok nodes", time.monotonic() - began)
        _wait_first_scrape(cluster, state.nodes, timeout=config.timeout_seconds)
        log.info("%-24s scraped every node after %.1f s", "prometheus", time.monotonic() - began)
    except BaseException as error:
        # Leave nothing running; keep the logs and the state for `status` and `down`.
        for process in reversed(state.processes):
            processes.stop(process)
        write_state(layout, state.model_copy(update={"phase": Phase.FAILED, "error": str(error)}))
        raise
    layout.env_file.write_text(
        configs.env_file_text(
            cluster.environment(), [bins.kubectl.parent, bins.helm.parent, bins.kwok.parent]
        )
    )
    write_state(layout, state.model_copy(update={"phase": Phase.READY}))
    return cluster


def _write_files(config: ClusterConfig, layout: Layout, ports: Ports, bins: Binaries) -> None:
    pki = write_pki(layout.pki.directory)
    identities = {
        "admin": ADMIN,
        "kube-controller-manager": CONTROLLER_MANAGER,
        "kube-scheduler": SCHEDULER,
        "metrics-server": METRICS_SERVER,
        "keda": KEDA,
    }
    for component, identity in identities.items():
        path = layout.admin_kubeconfig if component == "admin" else layout.kubeconfig_for(component)
        path.write_text(kubeconfig(ports.apiserver_url, pki, identity))
        path.chmod(0o600)
    layout.kwok_config.parent.mkdir(parents=True)
    layout.kwok_home.mkdir(parents=True)
    layout.kwok_config.write_text(
        configs.kwok_configuration([p.read_text() for p in bins.kwok_release_files()])
    )
    layout.scrape_targets.mkdir(parents=True)
    layout.prometheus_config.write_text(
        configs.prometheus_configuration(layout, ports, config.scrape_interval_seconds)
    )


def _launch(
    component: Component, config: ClusterConfig, layout: Layout, ports: Ports, bins: Binaries
) -> StartedProcess:
    command = [*component.command(bins, layout, ports), *config.extra_args.get(component.name, ())]
    return _start_process(component.name, command, layout)


def _start_process(name: str, command: Sequence[str], layout: Layout) -> StartedProcess:
    env = {**os.environ, **COMPONENTS_BY_NAME[name].environment(layout)}
    return processes.start(name, command, layout.log(name), env=env)


def _create_nodes(cluster: LocalCluster, config: ClusterConfig) -> tuple[str, ...]:
    names = tuple(f"{NODE_NAME_PREFIX}{i}" for i in range(config.nodes))
    with cluster.api() as api:
        core = client.CoreV1Api(api)
        for name in names:
            create_kwok_node(core, name, config.node_shape)
    return names


def _wait_first_scrape(cluster: LocalCluster, nodes: tuple[str, ...], *, timeout: float) -> None:
    """Prometheus has scraped kwok's metrics of every node at least once."""
    query_until(
        cluster.prometheus_url,
        "count(count by (node) (node_cpu_usage_seconds_total))",
        lambda samples: bool(samples) and samples[0].value >= len(nodes),
        timeout=timeout,
    )


def _stop_and_remove(run_dir: Path) -> list[Stopped]:
    try:
        state = read_state(run_dir)
    except ValueError:
        state = None
    stopped = [processes.stop(p) for p in reversed(state.processes)] if state else []
    shutil.rmtree(run_dir, ignore_errors=True)
    return stopped


def down(run_dir: Path | None = None) -> list[Stopped]:
    """Stop exactly the processes the run state lists, then remove the run directory."""
    run_dir = run_dir or default_run_dir()
    with locked(run_dir):
        return _stop_and_remove(run_dir)


@dataclass(frozen=True)
class ComponentStatus:
    name: str
    pid: int
    running: bool
    healthy: bool
    log: Path


@dataclass(frozen=True)
class ClusterStatus:
    run_dir: Path
    phase: Phase | None
    ports: Ports | None
    components: tuple[ComponentStatus, ...]
    nodes_ready: int | None
    error: str | None

    @property
    def healthy(self) -> bool:
        return (
            self.phase is Phase.READY
            and bool(self.components)
            and all(c.healthy for c in self.components)
        )


def status(run_dir: Path | None = None) -> ClusterStatus:
    run_dir = run_dir or default_run_dir()
    try:
        state = read_state(run_dir)
    except ValueError as error:
        return ClusterStatus(run_dir, None, None, (), None, f"unreadable state: {error}")
    if state is None:
        return ClusterStatus(run_dir, None, None, (), None, None)
    layout = Layout(run_dir)
    components = []
    for process in state.processes:
        running = processes.is_alive(process)
        healthy = False
        if running:
            try:
                healthy = COMPONENTS_BY_NAME[process.name].healthy(layout, state.ports)
            except Exception:  # noqa: BLE001 - an unanswered probe is "unhealthy"
                healthy = False
        components.append(ComponentStatus(process.name, process.pid, running, healthy, process.log))
    nodes_ready = None
    if state.phase is Phase.READY and all(c.healthy for c in components):
        with api_client(layout.admin_kubeconfig) as api:
            nodes_ready = sum(is_ready(n) for n in client.CoreV1Api(api).list_node().items)
    return ClusterStatus(
        run_dir, state.phase, state.ports, tuple(components), nodes_ready, state.error
    )


def restart_component(run_dir: Path, name: str) -> StartedProcess:
    """Start a stopped component again with its recorded command (fault tests use this)."""
    layout = Layout(run_dir)
    with locked(run_dir):
        state = read_state(run_dir)
        if state is None:
            raise ClusterError(f"no cluster state in {run_dir}")
        old = next(p for p in state.processes if p.name == name)
        processes.stop(old)
        new = _start_process(name, old.command, layout)
        write_state(layout, state.with_process(new))
    processes.wait_healthy(
        new, lambda: COMPONENTS_BY_NAME[name].healthy(layout, state.ports), timeout=120
    )
    return new


def stop_component(run_dir: Path, name: str) -> Stopped:
    state = read_state(run_dir)
    if state is None:
        raise ClusterError(f"no cluster state in {run_dir}")
    return processes.stop(next(p for p in state.processes if p.name == name))
