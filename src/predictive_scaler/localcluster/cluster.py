"""`up`, `down` and `status` of the local control plane.

`up` starts etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok
and Prometheus on free loopback ports, in that order, waiting for each to be
healthy before the next needs it. Every started process is written to the run
state at once, so `down` can stop exactly those, even after an `up` that failed
half-way. A lock beside the run directory keeps two `up`s from racing, and an
`up` that finds a live cluster reuses it instead of starting a second one.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import shutil
import socket
import ssl
import time
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from kubernetes import client
from pydantic import BaseModel, ConfigDict

from predictive_scaler.localcluster import configs, processes
from predictive_scaler.localcluster.build import BuildReport, binaries, build_all
from predictive_scaler.localcluster.certs import (
    ADMIN,
    CONTROLLER_MANAGER,
    SCHEDULER,
    kubeconfig,
    write_pki,
)
from predictive_scaler.localcluster.components import Binaries, cache_root
from predictive_scaler.localcluster.configs import Layout, Ports
from predictive_scaler.localcluster.kube import (
    NodeShape,
    api_client,
    create_kwok_node,
    is_ready,
    wait_nodes_ready,
)
from predictive_scaler.localcluster.processes import StartedProcess, Stopped
from predictive_scaler.localcluster.prometheus import query_until

log = logging.getLogger(__name__)

RUN_DIR_ENV = "PREDICTIVE_SCALER_RUN_DIR"
NODE_NAME_PREFIX = "kwok-node-"


def default_run_dir() -> Path:
    explicit = os.environ.get(RUN_DIR_ENV)
    return Path(explicit).expanduser() if explicit else cache_root() / "run"


class Phase(StrEnum):
    STARTING = "Starting"
    READY = "Ready"
    FAILED = "Failed"


class ClusterState(BaseModel):
    """What `up` started, written to `state.json` as it goes."""

    model_config = ConfigDict(frozen=True)

    phase: Phase
    ports: Ports
    processes: tuple[StartedProcess, ...] = ()
    nodes: tuple[str, ...] = ()
    error: str | None = None

    def with_process(self, process: StartedProcess) -> ClusterState:
        kept = tuple(p for p in self.processes if p.name != process.name)
        return self.model_copy(update={"processes": (*kept, process)})


@dataclass(frozen=True)
class ClusterConfig:
    run_dir: Path = field(default_factory=default_run_dir)
    nodes: int = 3
    node_shape: NodeShape = field(default_factory=NodeShape)
    scrape_interval_seconds: float = 2.0
    timeout_seconds: float = 180.0
    # Extra flags per component name ("kube-apiserver": ("--feature-gates=...",)).
    extra_args: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class LocalCluster:
    """Connection details of a running cluster; what the env file holds."""

    run_dir: Path
    ports: Ports
    binaries: Binaries

    @property
    def layout(self) -> Layout:
        return Layout(self.run_dir)

    @property
    def kubeconfig(self) -> Path:
        return self.layout.admin_kubeconfig

    @property
    def prometheus_url(self) -> str:
        return self.ports.prometheus_url

    def environment(self) -> dict[str, str]:
        p = self.ports
        return {
            "KUBECONFIG": str(self.kubeconfig),
            "PROMETHEUS_URL": p.prometheus_url,
            "PREDICTIVE_SCALER_RUN_DIR": str(self.run_dir),
            "PREDICTIVE_SCALER_APISERVER_URL": p.apiserver_url,
            "PREDICTIVE_SCALER_KWOK_URL": p.kwok_url,
            "PREDICTIVE_SCALER_ETCD_URL": p.etcd_url,
            "PREDICTIVE_SCALER_APISERVER_PORT": str(p.apiserver),
            "PREDICTIVE_SCALER_CONTROLLER_MANAGER_PORT": str(p.controller_manager),
            "PREDICTIVE_SCALER_SCHEDULER_PORT": str(p.scheduler),
            "PREDICTIVE_SCALER_KWOK_PORT": str(p.kwok),
            "PREDICTIVE_SCALER_PROMETHEUS_PORT": str(p.prometheus),
            "PREDICTIVE_SCALER_ETCD_PORT": str(p.etcd_client),
            "PREDICTIVE_SCALER_KUBECTL": str(self.binaries.kubectl),
            "PREDICTIVE_SCALER_HELM": str(self.binaries.helm),
        }

    def api(self) -> client.ApiClient:
        return api_client(self.kubeconfig)


@dataclass(frozen=True)
class UpResult:
    cluster: LocalCluster
    reused: bool
    seconds: float
    build: BuildReport | None = None


class ClusterError(RuntimeError):
    pass


# ---- probes -----------------------------------------------------------------


def _get(url: str, context: ssl.SSLContext | None = None) -> str:
    with urllib.request.urlopen(url, timeout=2, context=context) as response:
        body: bytes = response.read()
        return body.decode()


def _admin_tls(layout: Layout) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(layout.pki.ca_cert))
    context.load_cert_chain(layout.pki.client_cert(ADMIN), layout.pki.client_key(ADMIN))
    return context


def _self_signed_tls() -> ssl.SSLContext:
    # kube-controller-manager and kube-scheduler serve with a certificate they
    # make for themselves at start-up; only their /healthz is read here.
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


@dataclass(frozen=True)
class Component:
    name: str
    command: Callable[[Binaries, Layout, Ports], list[str]]
    healthy: Callable[[Layout, Ports], bool]


COMPONENTS = (
    Component(
        "etcd",
        configs.etcd_command,
        lambda layout, ports: '"health":"true"' in _get(f"{ports.etcd_url}/health"),
    ),
    Component(
        "kube-apiserver",
        configs.apiserver_command,
        lambda layout, ports: _get(f"{ports.apiserver_url}/readyz", _admin_tls(layout)) == "ok",
    ),
    Component(
        "kube-controller-manager",
        configs.controller_manager_command,
        lambda layout, ports: (
            _get(f"https://127.0.0.1:{ports.controller_manager}/healthz", _self_signed_tls())
            == "ok"
        ),
    ),
    Component(
        "kube-scheduler",
        configs.scheduler_command,
        lambda layout, ports: (
            _get(f"https://127.0.0.1:{ports.scheduler}/healthz", _self_signed_tls()) == "ok"
        ),
    ),
    Component(
        "kwok",
        configs.kwok_command,
        lambda layout, ports: _get(f"{ports.kwok_url}/healthz") == "ok",
    ),
    Component(
        "prometheus",
        configs.prometheus_command,
        lambda layout, ports: "Ready" in _get(f"{ports.prometheus_url}/-/ready"),
    ),
)
COMPONENTS_BY_NAME = {c.name: c for c in COMPONENTS}


# ---- state ------------------------------------------------------------------


def _free_ports(count: int) -> list[int]:
    """Distinct free loopback ports: all sockets stay bound until every port is chosen."""
    with contextlib.ExitStack() as stack:
        sockets = []
        for _ in range(count):
            s = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]


def allocate_ports() -> Ports:
    names = list(Ports.model_fields)
    return Ports(**dict(zip(names, _free_ports(len(names)), strict=True)))


def read_state(run_dir: Path) -> ClusterState | None:
    path = Layout(run_dir).state
    if not path.is_file():
        return None
    return ClusterState.model_validate_json(path.read_text())


def _write_state(layout: Layout, state: ClusterState) -> None:
    temporary = layout.state.with_suffix(".tmp")
    temporary.write_text(state.model_dump_json(indent=2))
    temporary.replace(layout.state)


@contextlib.contextmanager
def _locked(run_dir: Path) -> Iterator[None]:
    """One `up` or `down` at a time per run directory, across processes."""
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    lock_path = run_dir.with_name(run_dir.name + ".lock")
    with lock_path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def connect(run_dir: Path | None = None) -> LocalCluster | None:
    """The cluster the run directory describes, if it is Ready and its processes still run."""
    run_dir = run_dir or default_run_dir()
    try:
        state = read_state(run_dir)
    except ValueError:
        return None
    if state is None or state.phase is not Phase.READY:
        return None
    if not all(processes.is_alive(p) for p in state.processes):
        return None
    return LocalCluster(run_dir, state.ports, binaries())


# ---- up / down / status -----------------------------------------------------


def up(config: ClusterConfig | None = None) -> UpResult:
    config = config or ClusterConfig()
    started = time.monotonic()
    with _locked(config.run_dir):
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
    _write_state(layout, state)
    cluster = LocalCluster(config.run_dir, ports, bins)
    began = time.monotonic()
    try:
        _write_files(config, layout, ports, bins)
        for component in COMPONENTS:
            if component.name == "prometheus":
                # Nodes are created before Prometheus starts, so its first
                # service discovery already lists them; they turn Ready meanwhile.
                state = state.model_copy(update={"nodes": _create_nodes(cluster, config)})
            state = state.with_process(_launch(component, config, layout, ports, bins))
            _write_state(layout, state)
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
        _write_state(layout, state.model_copy(update={"phase": Phase.FAILED, "error": str(error)}))
        raise
    layout.env_file.write_text(
        configs.env_file_text(
            cluster.environment(), [bins.kubectl.parent, bins.helm.parent, bins.kwok.parent]
        )
    )
    _write_state(layout, state.model_copy(update={"phase": Phase.READY}))
    return cluster


def _write_files(config: ClusterConfig, layout: Layout, ports: Ports, bins: Binaries) -> None:
    pki = write_pki(layout.pki.directory)
    identities = {
        "admin": ADMIN,
        "kube-controller-manager": CONTROLLER_MANAGER,
        "kube-scheduler": SCHEDULER,
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
    env = dict(os.environ)
    if component.name == "kwok":
        env["HOME"] = str(layout.kwok_home)
    return processes.start(component.name, command, layout.log(component.name), env=env)


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
    with _locked(run_dir):
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
    state = read_state(run_dir)
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
    with _locked(run_dir):
        state = read_state(run_dir)
        if state is None:
            raise ClusterError(f"no cluster state in {run_dir}")
        old = next(p for p in state.processes if p.name == name)
        processes.stop(old)
        env = dict(os.environ)
        if name == "kwok":
            env["HOME"] = str(layout.kwok_home)
        new = processes.start(name, old.command, old.log, env=env)
        _write_state(layout, state.with_process(new))
    processes.wait_healthy(
        new, lambda: COMPONENTS_BY_NAME[name].healthy(layout, state.ports), timeout=120
    )
    return new


def stop_component(run_dir: Path, name: str) -> Stopped:
    state = read_state(run_dir)
    if state is None:
        raise ClusterError(f"no cluster state in {run_dir}")
    return processes.stop(next(p for p in state.processes if p.name == name))
