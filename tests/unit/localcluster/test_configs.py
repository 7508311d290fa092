from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from predictive_scaler_dev.localcluster import configs
from predictive_scaler_dev.localcluster.components import Binaries
from predictive_scaler_dev.localcluster.layout import Layout, Ports

PORTS = Ports(
    etcd_client=2379,
    etcd_peer=2380,
    apiserver=6443,
    controller_manager=10257,
    scheduler=10259,
    kwok=10247,
    prometheus=9090,
    metrics_server=4443,
    keda_operator_health=8081,
    keda_operator_metrics=8080,
    keda_operator_grpc=9666,
    keda_adapter=6444,
    keda_adapter_metrics=8082,
)


def _binaries(tmp_path: Path) -> Binaries:
    return Binaries.in_cache(tmp_path / "cache", tmp_path / "prometheus")


def test_every_component_listens_on_loopback_only(tmp_path: Path) -> None:
    layout, binaries = Layout(tmp_path), _binaries(tmp_path)
    commands = [
        configs.etcd_command(binaries, layout, PORTS),
        configs.apiserver_command(binaries, layout, PORTS),
        configs.controller_manager_command(binaries, layout, PORTS),
        configs.scheduler_command(binaries, layout, PORTS),
        configs.kwok_command(binaries, layout, PORTS),
        configs.prometheus_command(binaries, layout, PORTS),
        configs.metrics_server_command(binaries, layout, PORTS),
        configs.keda_operator_command(binaries, layout, PORTS),
        # Its own /metrics (--port) takes no address: KEDA binds it on every
        # interface, the one listener of the cluster that is not loopback only.
        configs.keda_adapter_command(binaries, layout, PORTS),
    ]
    # Any IPv4 address that is not a CIDR range (service and pod ranges are not bound).
    addresses = re.compile(r"(\d+\.\d+\.\d+\.\d+)(?![\d/])")
    for command in commands:
        flags = " ".join(command[1:])
        assert set(addresses.findall(flags)) == {"127.0.0.1"}, command[0]


def test_apiserver_runs_rbac_with_service_account_keys(tmp_path: Path) -> None:
    flags = configs.apiserver_command(_binaries(tmp_path), Layout(tmp_path), PORTS)
    assert "--authorization-mode=RBAC" in flags
    assert "--advertise-address=127.0.0.1" in flags
    assert any(f.startswith("--service-account-signing-key-file=") for f in flags)
    controller = configs.controller_manager_command(_binaries(tmp_path), Layout(tmp_path), PORTS)
    assert any(f.startswith("--service-account-private-key-file=") for f in controller)
    assert any(f.startswith("--root-ca-file=") for f in controller)


def test_the_aggregator_forwards_as_the_name_its_requestheader_ca_allows(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    flags = configs.apiserver_command(_binaries(tmp_path), layout, PORTS)
    assert "--requestheader-allowed-names=front-proxy-client" in flags
    assert f"--proxy-client-cert-file={layout.pki.directory}/front-proxy-client.crt" in flags
    assert f"--proxy-client-key-file={layout.pki.directory}/front-proxy-client.key" in flags


def test_metrics_server_reads_kwok_nodes_at_their_status_port_and_serves_tls(
    tmp_path: Path,
) -> None:
    layout = Layout(tmp_path)
    flags = configs.metrics_server_command(_binaries(tmp_path), layout, PORTS)
    assert "--kubelet-use-node-status-port" in flags
    assert "--kubelet-preferred-address-types=InternalIP" in flags
    assert "--secure-port=4443" in flags
    assert f"--tls-cert-file={layout.pki.metrics_server_cert}" in flags
    assert f"--kubeconfig={layout.kubeconfig_for('metrics-server')}" in flags
    resolution = next(f for f in flags if f.startswith("--metric-resolution="))
    # metrics-server refuses anything under 10 s.
    assert int(resolution.split("=")[1].removesuffix("s")) >= 10


def test_prometheus_labels_each_kwok_target_with_its_node(tmp_path: Path) -> None:
    config = json.loads(configs.prometheus_configuration(Layout(tmp_path), PORTS, 2.0))
    assert config["global"]["scrape_interval"] == "2000ms"
    jobs = {job["job_name"]: job for job in config["scrape_configs"]}
    nodes = jobs[configs.KWOK_NODE_METRICS_JOB]
    assert nodes["http_sd_configs"][0]["url"] == "http://127.0.0.1:10247/discovery/prometheus"
    (relabel,) = nodes["relabel_configs"]
    # Prometheus anchors relabel regexes at both ends.
    match = re.fullmatch(relabel["regex"], "/metrics/nodes/kwok-node-2/metrics/resource")
    assert match is not None
    assert relabel["replacement"].replace("$1", match.group(1)) == "kwok-node-2"
    extra = jobs[configs.EXTRA_TARGETS_JOB]["file_sd_configs"][0]["files"][0]
    assert extra.startswith(str(tmp_path))
    assert extra.endswith("*.json")


def test_kwok_configuration_is_one_stream_of_the_release_files() -> None:
    text = configs.kwok_configuration(["kind: Stage\nmetadata:\n  name: a\n", "kind: Metric\n"])
    assert text.split("\n---\n") == ["kind: Stage\nmetadata:\n  name: a", "kind: Metric\n"]


def test_only_the_pod_ready_stage_gets_a_start_up_delay_from_an_annotation() -> None:
    ready = "kind: Stage\nmetadata:\n  name: pod-ready\nspec:\n  next: {}\n"
    other = "kind: Stage\nmetadata:\n  name: pod-delete\nspec:\n  next: {}\n"
    stages = list(yaml.safe_load_all(configs.kwok_configuration([ready, other])))
    delay = stages[0]["spec"]["delay"]
    assert delay["durationMilliseconds"] == 0
    assert configs.STARTUP_DELAY_ANNOTATION in delay["durationFrom"]["expressionFrom"]
    assert stages[0]["spec"]["next"] == {}
    assert "delay" not in stages[1]["spec"]


def test_env_file_exports_quoted_values_and_prepends_binaries_to_path() -> None:
    text = configs.env_file_text({"KUBECONFIG": "/a b/kubeconfig"}, [Path("/bin dir")])
    assert "export KUBECONFIG='/a b/kubeconfig'" in text
    assert "export PATH='/bin dir':\"$PATH\"" in text


def test_keda_talks_to_itself_over_loopback_with_the_clusters_certificates(
    tmp_path: Path,
) -> None:
    layout, binaries = Layout(tmp_path), _binaries(tmp_path)
    operator = configs.keda_operator_command(binaries, layout, PORTS)
    adapter = configs.keda_adapter_command(binaries, layout, PORTS)
    assert "--metrics-service-bind-address=127.0.0.1:9666" in operator
    assert "--metrics-service-address=127.0.0.1:9666" in adapter
    for flags in (operator, adapter):
        assert f"--cert-dir={layout.pki.keda_certs}" in flags
    assert "--enable-cert-rotation=false" in operator
    assert f"--tls-cert-file={layout.pki.keda_cert}" in adapter
    environment = configs.keda_environment(layout)
    assert environment["KUBECONFIG"] == str(layout.kubeconfig_for("keda"))
    assert environment["KEDA_CLUSTER_OBJECT_NAMESPACE"] == environment["POD_NAMESPACE"] == "keda"
