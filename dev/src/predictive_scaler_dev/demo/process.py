"""`predictive-scaler run` as a child process against the local cluster, scraped by its Prometheus.

The demo and the end-to-end tests start the operator exactly as a user would,
with the environment the local cluster implies.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from predictive_scaler_dev.localcluster import LocalCluster
from predictive_scaler_dev.localcluster.waiting import wait_until

STOP_GRACE_SECONDS = 20.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class OperatorExitedError(RuntimeError):
    pass


@dataclass
class OperatorProcess:
    cluster: LocalCluster
    namespace: str  # the only namespace it watches
    log: Path
    metrics_port: int = field(default_factory=free_port)
    liveness_port: int = field(default_factory=free_port)
    extra_env: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None

    def settings(self) -> dict[str, str]:
        """The operator's own configuration: what a user sets in its environment."""
        env = dict(
            PROMETHEUS_URL=self.cluster.prometheus_url,
            PREDICTIVE_SCALER_NAMESPACES=self.namespace,
            PREDICTIVE_SCALER_BIND_ADDRESS="127.0.0.1",
            PREDICTIVE_SCALER_METRICS_PORT=str(self.metrics_port),
            PREDICTIVE_SCALER_LIVENESS_PORT=str(self.liveness_port),
            PREDICTIVE_SCALER_SCRAPE_INTERVAL=f"{self.cluster.scrape_interval_seconds:g}s",
        )
        env.update(self.extra_env)
        return env

    def environment(self) -> dict[str, str]:
        """The launched process's environment: this one's, the cluster's kubeconfig, settings."""
        env = dict(os.environ)
        env["KUBECONFIG"] = str(self.cluster.kubeconfig)
        env.update(self.settings())
        return env

    def command(self) -> list[str]:
        return [sys.executable, "-m", "predictive_scaler", "run"]

    def start(self, *, timeout: float = 60.0) -> None:
        """Start and wait for its liveness endpoint; OperatorExitedError if it dies first."""
        with self.log.open("ab") as output:
            self.process = subprocess.Popen(
                self.command(),
                stdout=output,
                stderr=subprocess.STDOUT,
                env=self.environment(),
                start_new_session=True,
            )
        try:
            wait_until(self.alive, timeout=timeout, what=f"operator liveness (log {self.log})")
        except BaseException:
            # It runs in its own session: nothing else would stop one that never came up.
            self.stop()
            raise

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def alive(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            raise OperatorExitedError(
                f"operator exited with {self.process.returncode}:\n{self.log_tail()}"
            )
        try:
            url = f"http://127.0.0.1:{self.liveness_port}/healthz"
            with urllib.request.urlopen(url, timeout=1) as response:
                return bool(response.status == 200)
        except OSError:
            return False

    def kill(self) -> None:
        """SIGKILL: no chance to finish anything, as when a node dies."""
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def terminate(self) -> None:
        """Ask it to stop: SIGTERM to its process group, as Kubernetes does to a container."""
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGTERM)

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after a grace period."""
        if self.running():
            assert self.process is not None
            self.terminate()
            try:
                self.process.wait(timeout=STOP_GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def metrics_text(self) -> str:
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=2) as response:
            body: bytes = response.read()
        return body.decode()
