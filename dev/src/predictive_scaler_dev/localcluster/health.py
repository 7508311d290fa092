"""How each component starts and how `up` and `status` know it is healthy, in start order."""

from __future__ import annotations

import ssl
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field

from predictive_scaler_dev.localcluster import configs
from predictive_scaler_dev.localcluster.certs import ADMIN
from predictive_scaler_dev.localcluster.components import Binaries
from predictive_scaler_dev.localcluster.layout import Layout, Ports


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


def _no_environment(layout: Layout) -> dict[str, str]:
    return {}


@dataclass(frozen=True)
class Component:
    name: str
    command: Callable[[Binaries, Layout, Ports], list[str]]
    healthy: Callable[[Layout, Ports], bool]
    # Variables set on top of the caller's environment.
    environment: Callable[[Layout], dict[str, str]] = field(default=_no_environment)


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
        # kwok also reads ~/.kwok/kwok.yaml when it exists; a private HOME keeps
        # a user's own kwok set-up out of the test cluster.
        lambda layout: {"HOME": str(layout.kwok_home)},
    ),
    Component(
        "prometheus",
        configs.prometheus_command,
        lambda layout, ports: "Ready" in _get(f"{ports.prometheus_url}/-/ready"),
    ),
    Component(
        "metrics-server",
        configs.metrics_server_command,
        # Live, not ready: ready needs two reads of every node (twice the
        # resolution), which `kubectl top` and the HPA wait for on their own.
        lambda layout, ports: _get(f"{ports.metrics_server_url}/livez", _admin_tls(layout)) == "ok",
    ),
    Component(
        "keda-operator",
        configs.keda_operator_command,
        lambda layout, ports: _get(f"http://127.0.0.1:{ports.keda_operator_health}/readyz") == "ok",
        configs.keda_environment,
    ),
    Component(
        "keda-adapter",
        configs.keda_adapter_command,
        lambda layout, ports: (
            _get(f"https://127.0.0.1:{ports.keda_adapter}/livez", _admin_tls(layout)) == "ok"
        ),
        configs.keda_environment,
    ),
)
COMPONENTS_BY_NAME = {c.name: c for c in COMPONENTS}
