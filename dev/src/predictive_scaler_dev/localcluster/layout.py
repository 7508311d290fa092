"""Where the local control plane lives: its loopback ports and the files in its run directory."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from predictive_scaler_dev.localcluster.certs import Pki


class Ports(BaseModel):
    """Loopback ports, chosen free at `up` and recorded in the run state."""

    model_config = ConfigDict(frozen=True)

    etcd_client: int
    etcd_peer: int
    apiserver: int
    controller_manager: int
    scheduler: int
    kwok: int
    prometheus: int
    # 0 in the state of a cluster started before metrics-server was one of its
    # components: still read, so `down` stops its processes.
    metrics_server: int = 0
    # 0 likewise in the state of a cluster from before KEDA.
    keda_operator_health: int = 0
    keda_operator_metrics: int = 0
    keda_operator_grpc: int = 0
    keda_adapter: int = 0
    keda_adapter_metrics: int = 0

    @property
    def apiserver_url(self) -> str:
        return f"https://127.0.0.1:{self.apiserver}"

    @property
    def etcd_url(self) -> str:
        return f"http://127.0.0.1:{self.etcd_client}"

    @property
    def kwok_url(self) -> str:
        return f"http://127.0.0.1:{self.kwok}"

    @property
    def prometheus_url(self) -> str:
        return f"http://127.0.0.1:{self.prometheus}"

    @property
    def metrics_server_url(self) -> str:
        return f"https://127.0.0.1:{self.metrics_server}"


@dataclass(frozen=True)
class Layout:
    """Where each component keeps its files inside the run directory."""

    run_dir: Path

    @property
    def pki(self) -> Pki:
        return Pki(self.run_dir / "pki")

    @property
    def logs(self) -> Path:
        return self.run_dir / "logs"

    @property
    def etcd_data(self) -> Path:
        return self.run_dir / "etcd"

    @property
    def admin_kubeconfig(self) -> Path:
        return self.run_dir / "kubeconfig"

    def kubeconfig_for(self, component: str) -> Path:
        return self.run_dir / f"{component}.kubeconfig"

    @property
    def kwok_config(self) -> Path:
        return self.run_dir / "kwok" / "kwok.yaml"

    @property
    def kwok_home(self) -> Path:
        # kwok also reads ~/.kwok/kwok.yaml when it exists; a private HOME keeps
        # a user's own kwok set-up out of the test cluster.
        return self.run_dir / "kwok" / "home"

    @property
    def prometheus_config(self) -> Path:
        return self.run_dir / "prometheus" / "prometheus.yml"

    @property
    def prometheus_data(self) -> Path:
        return self.run_dir / "prometheus" / "data"

    @property
    def scrape_targets(self) -> Path:
        return self.run_dir / "prometheus" / "targets"

    @property
    def state(self) -> Path:
        return self.run_dir / "state.json"

    @property
    def env_file(self) -> Path:
        return self.run_dir / "env"

    def log(self, component: str) -> Path:
        return self.logs / f"{component}.log"
