"""The local cluster's run state: what `up` started, where, and how to reach it.

Written to `state.json` in the run directory as `up` goes, so that `down`,
`status` and the test fixtures (in other processes) see the same facts.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import socket
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from kubernetes import client
from pydantic import BaseModel, ConfigDict

from predictive_scaler_dev.localcluster import processes
from predictive_scaler_dev.localcluster.build import BuildReport, binaries
from predictive_scaler_dev.localcluster.components import Binaries, cache_root
from predictive_scaler_dev.localcluster.health import COMPONENTS
from predictive_scaler_dev.localcluster.kube import NodeShape, api_client
from predictive_scaler_dev.localcluster.layout import Layout, Ports
from predictive_scaler_dev.localcluster.processes import StartedProcess

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

    @property
    def scrape_interval_seconds(self) -> float:
        """Prometheus's global scrape interval, as `up` wrote it (in milliseconds)."""
        written = json.loads(self.layout.prometheus_config.read_text())
        return float(str(written["global"]["scrape_interval"]).removesuffix("ms")) / 1000

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
            "PREDICTIVE_SCALER_METRICS_SERVER_PORT": str(p.metrics_server),
            "PREDICTIVE_SCALER_ETCD_PORT": str(p.etcd_client),
            "PREDICTIVE_SCALER_KUBECTL": str(self.binaries.kubectl),
            "PREDICTIVE_SCALER_HELM": str(self.binaries.helm),
        }

    def api(self) -> client.ApiClient:
        return api_client(self.kubeconfig)

    def add_scrape_target(
        self,
        name: str,
        address: str,
        labels: Mapping[str, str] | None = None,
        *,
        interval_seconds: float | None = None,
    ) -> Path:
        """Have Prometheus scrape `address` (host:port, path /metrics), e.g. the operator.

        Prometheus watches the folder of file-based discovery, so no reload is needed.
        `interval_seconds` overrides the cluster's scrape interval for this target
        (Prometheus's `__scrape_interval__` target label).
        """
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
            raise ValueError(f"scrape target name {name!r}: use letters, digits, '.', '_', '-'")
        path = self.layout.scrape_targets / f"{name}.json"
        every = (
            {} if interval_seconds is None else {"__scrape_interval__": f"{interval_seconds:g}s"}
        )
        group = {"targets": [address], "labels": {"target": name, **(labels or {}), **every}}
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps([group]))
        temporary.replace(path)
        return path

    def remove_scrape_target(self, name: str) -> None:
        (self.layout.scrape_targets / f"{name}.json").unlink(missing_ok=True)


@dataclass(frozen=True)
class UpResult:
    cluster: LocalCluster
    reused: bool
    seconds: float
    build: BuildReport | None = None


class ClusterError(RuntimeError):
    pass


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


def write_state(layout: Layout, state: ClusterState) -> None:
    temporary = layout.state.with_suffix(".tmp")
    temporary.write_text(state.model_dump_json(indent=2))
    temporary.replace(layout.state)


@contextlib.contextmanager
def locked(run_dir: Path) -> Iterator[None]:
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
    if {p.name for p in state.processes} != {c.name for c in COMPONENTS}:
        return None  # started by a version with other components: start anew
    if not all(processes.is_alive(p) for p in state.processes):
        return None
    return LocalCluster(run_dir, state.ports, binaries())
