"""Command lines and configuration files of every component, checked against upstream flags.

Pure text generation: nothing here starts a process, so every component's
command line and configuration can be read (and unit-tested) in one place.
Where each listens and keeps its files is :mod:`.layout`.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path

import yaml

from predictive_scaler_dev.localcluster.certs import (
    FRONT_PROXY,
    KEDA_NAMESPACE,
    SERVICE_CLUSTER_IP_RANGE,
)
from predictive_scaler_dev.localcluster.components import Binaries
from predictive_scaler_dev.localcluster.layout import Layout, Ports

KWOK_NODE_ANNOTATION = "kwok.x-k8s.io/node"
KWOK_NODE_ANNOTATION_VALUE = "fake"
POD_CIDR = "10.244.0.0/16"
SERVICE_ACCOUNT_ISSUER = "https://kubernetes.default.svc.cluster.local"
KWOK_NODE_METRICS_JOB = "kwok-nodes"
KWOK_CONTROLLER_JOB = "kwok-controller"
EXTRA_TARGETS_JOB = "extra"


def etcd_command(binaries: Binaries, layout: Layout, ports: Ports) -> list[str]:
    return [
        str(binaries.etcd),
        "--name=local",
        f"--data-dir={layout.etcd_data}",
        f"--listen-client-urls={ports.etcd_url}",
        f"--advertise-client-urls={ports.etcd_url}",
        f"--listen-peer-urls=http://127.0.0.1:{ports.etcd_peer}",
        f"--initial-advertise-peer-urls=http://127.0.0.1:{ports.etcd_peer}",
        f"--initial-cluster=local=http://127.0.0.1:{ports.etcd_peer}",
        # Throw-away data on a shared CI disk: no fsync per write.
        "--unsafe-no-fsync",
        "--quota-backend-bytes=2147483648",
        "--log-level=warn",
    ]


def apiserver_command(binaries: Binaries, layout: Layout, ports: Ports) -> list[str]:
    pki = layout.pki
    return [
        str(binaries.kube_apiserver),
        f"--etcd-servers={ports.etcd_url}",
        "--bind-address=127.0.0.1",
        # Without a default route the server cannot pick an address of its own.
        "--advertise-address=127.0.0.1",
        f"--secure-port={ports.apiserver}",
        f"--tls-cert-file={pki.serving_cert}",
        f"--tls-private-key-file={pki.serving_key}",
        f"--client-ca-file={pki.ca_cert}",
        # The aggregator: it forwards metrics.k8s.io to metrics-server as the
        # front proxy, whose certificate metrics-server trusts by this CA and
        # name (published in kube-system/extension-apiserver-authentication,
        # which the controller-manager and scheduler read as well). One CA
        # signs every certificate of this throw-away cluster; the allowed name
        # keeps any other client certificate from posing as the proxy.
        f"--requestheader-client-ca-file={pki.ca_cert}",
        f"--requestheader-allowed-names={FRONT_PROXY.user}",
        "--requestheader-username-headers=X-Remote-User",
        "--requestheader-group-headers=X-Remote-Group",
        "--requestheader-extra-headers-prefix=X-Remote-Extra-",
        f"--proxy-client-cert-file={pki.client_cert(FRONT_PROXY)}",
        f"--proxy-client-key-file={pki.client_key(FRONT_PROXY)}",
        "--authorization-mode=RBAC",
        f"--service-account-issuer={SERVICE_ACCOUNT_ISSUER}",
        f"--service-account-key-file={pki.service_account_public_key}",
        f"--service-account-signing-key-file={pki.service_account_key}",
        f"--service-cluster-ip-range={SERVICE_CLUSTER_IP_RANGE}",
        # The `kubernetes` Service would point at 127.0.0.1, which Endpoints refuse.
        "--endpoint-reconciler-type=none",
        "--profiling=false",
        "--v=1",
    ]


def _secure_component_flags(kubeconfig: Path, port: int) -> list[str]:
    return [
        f"--kubeconfig={kubeconfig}",
        f"--authentication-kubeconfig={kubeconfig}",
        f"--authorization-kubeconfig={kubeconfig}",
        "--bind-address=127.0.0.1",
        f"--secure-port={port}",
        # One instance per cluster: no need to wait for a lease at start-up.
        "--leader-elect=false",
        "--profiling=false",
        "--v=1",
    ]


HPA_TIMINGS = {
    "sync-period": "1s",
    "cpu-initialization-period": "1s",
    "initial-readiness-delay": "1s",
}


def controller_manager_command(binaries: Binaries, layout: Layout, ports: Ports) -> list[str]:
    return [
        str(binaries.kube_controller_manager),
        *_secure_component_flags(
            layout.kubeconfig_for("kube-controller-manager"), ports.controller_manager
        ),
        # Each controller acts as its own service account (tokens through the
        # TokenRequest API), as in a real cluster, so RBAC is exercised the same way.
        "--use-service-account-credentials=true",
        # Legacy secret-based tokens, for workloads that still mount them.
        f"--service-account-private-key-file={layout.pki.service_account_key}",
        # Published to every namespace as the kube-root-ca.crt ConfigMap.
        f"--root-ca-file={layout.pki.ca_cert}",
        # This cluster replays load time-compressed (the demo: 15 trace minutes
        # every 2 s), so the HPA controller decides every second instead of
        # every 15 s, and its allowances for starting pods (5 min of CPU
        # initialisation, 30 s of readiness delay) shrink to a second, the
        # least that is not zero. Its behavior windows are the HPA object's own.
        *(f"--horizontal-pod-autoscaler-{flag}={value}" for flag, value in HPA_TIMINGS.items()),
    ]


def scheduler_command(binaries: Binaries, layout: Layout, ports: Ports) -> list[str]:
    return [
        str(binaries.kube_scheduler),
        *_secure_component_flags(layout.kubeconfig_for("kube-scheduler"), ports.scheduler),
    ]


def kwok_command(binaries: Binaries, layout: Layout, ports: Ports) -> list[str]:
    return [
        str(binaries.kwok),
        f"--config={layout.kwok_config}",
        f"--kubeconfig={layout.admin_kubeconfig}",
        "--manage-all-nodes=false",
        f"--manage-nodes-with-annotation-selector={KWOK_NODE_ANNOTATION}={KWOK_NODE_ANNOTATION_VALUE}",
        f"--cidr={POD_CIDR}",
        "--node-ip=127.0.0.1",
        f"--node-port={ports.kwok}",
        f"--server-address=127.0.0.1:{ports.kwok}",
        "--node-lease-duration-seconds=40",
    ]


# How often metrics-server reads every node: its floor, so the HPA beside the
# operator sees load changes as soon as the real one can.
METRICS_SERVER_RESOLUTION = "10s"


def _aggregated_server_flags(kubeconfig: Path, port: int, cert: Path, key: Path) -> list[str]:
    """An API server behind the aggregator: it delegates authentication and
    authorisation to kube-apiserver, and serves TLS on loopback."""
    return [
        f"--authentication-kubeconfig={kubeconfig}",
        f"--authorization-kubeconfig={kubeconfig}",
        "--bind-address=127.0.0.1",
        f"--secure-port={port}",
        f"--tls-cert-file={cert}",
        f"--tls-private-key-file={key}",
    ]


def metrics_server_command(binaries: Binaries, layout: Layout, ports: Ports) -> list[str]:
    kubeconfig = layout.kubeconfig_for("metrics-server")
    return [
        str(binaries.metrics_server),
        f"--kubeconfig={kubeconfig}",
        *_aggregated_server_flags(
            kubeconfig,
            ports.metrics_server,
            layout.pki.metrics_server_cert,
            layout.pki.metrics_server_key,
        ),
        # kwok answers for every node on its own loopback port (the node's
        # InternalIP and status port), each node on its own path, which the
        # node's `metrics.k8s.io/resource-metrics-path` annotation names. It
        # serves plain HTTP, as it does for Prometheus; the API side of
        # metrics-server is TLS with certificates from the cluster's CA.
        "--kubelet-preferred-address-types=InternalIP",
        "--kubelet-use-node-status-port",
        "--deprecated-kubelet-completely-insecure",
        f"--metric-resolution={METRICS_SERVER_RESOLUTION}",
        # It must stay under nine tenths of the resolution; kwok answers in milliseconds.
        "--kubelet-request-timeout=5s",
        "--profiling=false",
        "--v=1",
    ]


def keda_environment(layout: Layout) -> dict[str, str]:
    """What KEDA reads from its pod: its namespace, where its objects live, and what it watches.

    `KUBECONFIG` is how controller-runtime finds the cluster outside a pod.
    """
    return {
        "KUBECONFIG": str(layout.kubeconfig_for("keda")),
        "POD_NAMESPACE": KEDA_NAMESPACE,
        "KEDA_CLUSTER_OBJECT_NAMESPACE": KEDA_NAMESPACE,
        "WATCH_NAMESPACE": "",
    }


_KEDA_LOGGING = ("--zap-log-level=info", "--zap-encoder=console", "--zap-time-encoding=rfc3339")


def keda_operator_command(binaries: Binaries, layout: Layout, ports: Ports) -> list[str]:
    return [
        str(binaries.keda_operator),
        f"--metrics-bind-address=127.0.0.1:{ports.keda_operator_metrics}",
        f"--health-probe-bind-address=127.0.0.1:{ports.keda_operator_health}",
        # The gRPC metrics service the adapter asks, mutual TLS from --cert-dir.
        f"--metrics-service-bind-address=127.0.0.1:{ports.keda_operator_grpc}",
        f"--cert-dir={layout.pki.keda_certs}",
        # The cluster's CA made the certificates; KEDA must not replace them.
        "--enable-cert-rotation=false",
        "--leader-elect=false",
        *_KEDA_LOGGING,
    ]


def keda_adapter_command(binaries: Binaries, layout: Layout, ports: Ports) -> list[str]:
    kubeconfig = layout.kubeconfig_for("keda")
    return [
        str(binaries.keda_adapter),
        f"--lister-kubeconfig={kubeconfig}",
        *_aggregated_server_flags(
            kubeconfig, ports.keda_adapter, layout.pki.keda_cert, layout.pki.keda_key
        ),
        # Its gRPC client certificate and the CA it checks the operator's against.
        f"--cert-dir={layout.pki.keda_certs}",
        f"--metrics-service-address=127.0.0.1:{ports.keda_operator_grpc}",
        # Its own /metrics; KEDA binds it on every interface, no flag narrows it.
        f"--port={ports.keda_adapter_metrics}",
        *_KEDA_LOGGING,
    ]


# A pod annotated with a Go duration ("4s") turns Ready that long after it is
# scheduled, as a real container would after pulling and warming up; without
# the annotation pods start at once, as in kwok's own fast stages.
STARTUP_DELAY_ANNOTATION = "predictive-scaler.io/kwok-startup-delay"
_DELAYED_STAGE = "pod-ready"


def kwok_configuration(release_files: Sequence[str]) -> str:
    """kwok's `--config`: the release's stages and metrics as one YAML stream.

    The one change to upstream's files: the pod-ready stage takes its delay
    from STARTUP_DELAY_ANNOTATION (kwok's own ``delay.durationFrom``, default 0).
    No KwokConfiguration document: a loaded one is not defaulted (its zero
    parallelism settings make kwok exit), while without one kwok applies its
    own defaults and takes the rest from the command-line flags.
    """
    documents = []
    for original in release_files:
        text = original
        stage = yaml.safe_load(original)
        if stage.get("kind") == "Stage" and stage["metadata"]["name"] == _DELAYED_STAGE:
            stage["spec"]["delay"] = {
                "durationMilliseconds": 0,
                "durationFrom": {
                    "expressionFrom": f'.metadata.annotations["{STARTUP_DELAY_ANNOTATION}"]'
                },
            }
            text = yaml.safe_dump(stage, sort_keys=False)
        documents.append(text.strip())
    return "\n---\n".join(documents) + "\n"


def prometheus_command(binaries: Binaries, layout: Layout, ports: Ports) -> list[str]:
    return [
        str(binaries.prometheus),
        f"--config.file={layout.prometheus_config}",
        f"--storage.tsdb.path={layout.prometheus_data}",
        # Long enough for the forecasts' default long history (15 d), backfilled by tests.
        "--storage.tsdb.retention.time=16d",
        f"--web.listen-address=127.0.0.1:{ports.prometheus}",
        # POST /-/reload after a test changes the scrape configuration.
        "--web.enable-lifecycle",
        "--log.level=warn",
    ]


def prometheus_configuration(layout: Layout, ports: Ports, scrape_interval_seconds: float) -> str:
    """kwok's nodes through its HTTP service discovery, kwok itself, and file-listed extras.

    Every per-node target's metrics path carries the node name
    (/metrics/nodes/<node>/metrics/resource); relabelling copies it into a
    `node` label so node-level series can be told apart.
    """
    interval = f"{max(1, round(scrape_interval_seconds * 1000))}ms"
    config = {
        "global": {"scrape_interval": interval, "evaluation_interval": interval},
        "scrape_configs": [
            {
                "job_name": KWOK_NODE_METRICS_JOB,
                "http_sd_configs": [
                    {"url": f"{ports.kwok_url}/discovery/prometheus", "refresh_interval": "5s"}
                ],
                "relabel_configs": [
                    {
                        "source_labels": ["__metrics_path__"],
                        "regex": "/metrics/nodes/([^/]+)/.*",
                        "target_label": "node",
                        "replacement": "$1",
                    }
                ],
            },
            {
                "job_name": KWOK_CONTROLLER_JOB,
                "static_configs": [{"targets": [f"127.0.0.1:{ports.kwok}"]}],
            },
            {
                "job_name": EXTRA_TARGETS_JOB,
                "file_sd_configs": [
                    {"files": [str(layout.scrape_targets / "*.json")], "refresh_interval": "5s"}
                ],
            },
        ],
    }
    # JSON is YAML; no YAML writer needed for a file Prometheus only reads.
    return json.dumps(config, indent=2) + "\n"


def env_file_text(values: Mapping[str, str], path_prefix: Sequence[Path]) -> str:
    """Shell `export` lines; the built kubectl and helm are put first on PATH."""
    lines = ["# Written by the local cluster's `up`; source it to reach the cluster."]
    lines += [f"export {key}={shlex.quote(value)}" for key, value in values.items()]
    prefix = ":".join(shlex.quote(str(p)) for p in path_prefix)
    lines.append(f'export PATH={prefix}:"$PATH"')
    return "\n".join(lines) + "\n"
