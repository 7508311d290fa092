"""The Helm chart: lint, typed values, and rendered objects the real API server accepts."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

import predictive_scaler_dev.localcluster as local
from tests.fixtures.operator import kubectl

CHART = Path(__file__).resolve().parents[2] / "charts" / "predictive-scaler"
KUBE_VERSION = "1.36.0"  # helm template has no cluster to ask
DASHBOARDS = sorted((CHART / "dashboards").glob("*.json"))


def helm(cluster: local.LocalCluster, *args: str) -> subprocess.CompletedProcess[str]:
    command = [str(cluster.binaries.helm), *args]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def template(cluster: local.LocalCluster, *settings: str) -> subprocess.CompletedProcess[str]:
    """`helm template` of the chart as release ops, ``settings`` given as --set pairs."""
    return helm(
        cluster, "template", "ops", str(CHART), "--kube-version", KUBE_VERSION,
        *(part for setting in settings for part in ("--set", setting)),
    )  # fmt: skip


def test_the_chart_lints_clean(local_cluster: local.LocalCluster) -> None:
    linted = helm(local_cluster, "lint", str(CHART), "--strict", "--kube-version", KUBE_VERSION)
    assert linted.returncode == 0, linted.stdout + linted.stderr


def test_rendered_objects_pass_server_side_validation(
    local_cluster: local.LocalCluster, crd: str, namespace: str
) -> None:
    rendered = helm(
        local_cluster,
        "template", "ops", str(CHART),
        "--namespace", namespace,
        "--kube-version", KUBE_VERSION,
        "--set", "metrics.serviceMonitor.enabled=false",
    )  # fmt: skip
    assert rendered.returncode == 0, rendered.stderr
    applied = kubectl(
        local_cluster,
        "apply",
        "--dry-run=server",
        "-n",
        namespace,
        "-f",
        "-",
        stdin=rendered.stdout,
    )
    accepted = {line.split()[0] for line in applied.splitlines() if "(server dry run)" in line}
    assert accepted == {
        "serviceaccount/ops",
        "clusterrole.rbac.authorization.k8s.io/ops",
        "clusterrolebinding.rbac.authorization.k8s.io/ops",
        "role.rbac.authorization.k8s.io/ops-leader-election",
        "rolebinding.rbac.authorization.k8s.io/ops-leader-election",
        "service/ops-metrics",
        "deployment.apps/ops",
        *(f"configmap/ops-dashboard-{board.stem}" for board in DASHBOARDS),
    }


def test_the_service_monitor_carries_the_labels_a_prometheus_selects_by(
    local_cluster: local.LocalCluster,
) -> None:
    rendered = template(
        local_cluster,
        "metrics.serviceMonitor.enabled=true",
        "metrics.serviceMonitor.labels.release=monitoring",
    )
    assert rendered.returncode == 0, rendered.stderr
    (monitor,) = (
        document
        for document in yaml.safe_load_all(rendered.stdout)
        if document and document["kind"] == "ServiceMonitor"
    )
    assert monitor["metadata"]["labels"]["release"] == "monitoring"
    assert monitor["metadata"]["labels"]["app.kubernetes.io/name"] == "predictive-scaler"
    # The Service is still selected by the chart's own labels, not the extra ones.
    assert "release" not in monitor["spec"]["selector"]["matchLabels"]


def test_each_dashboard_ships_verbatim_as_a_configmap_for_grafanas_sidecar(
    local_cluster: local.LocalCluster,
) -> None:
    rendered = helm(
        local_cluster,
        "template", "ops", str(CHART),
        "--kube-version", KUBE_VERSION,
        "--show-only", "templates/dashboards.yaml",
        "--set", "dashboards.folder=Autoscaling",
        "--set", "dashboards.namespace=monitoring",
    )  # fmt: skip
    assert rendered.returncode == 0, rendered.stderr
    maps = {m["metadata"]["name"]: m for m in yaml.safe_load_all(rendered.stdout) if m}
    assert len(DASHBOARDS) == 3
    for board in DASHBOARDS:
        shipped = maps[f"ops-dashboard-{board.stem}"]
        assert shipped["metadata"]["labels"]["grafana_dashboard"] == "1"
        assert shipped["metadata"]["annotations"] == {"grafana_folder": "Autoscaling"}
        assert shipped["metadata"]["namespace"] == "monitoring"
        assert json.loads(shipped["data"][board.name]) == json.loads(board.read_text())

    disabled = template(local_cluster, "dashboards.enabled=false")
    assert disabled.returncode == 0, disabled.stderr
    assert "kind: ConfigMap" not in disabled.stdout


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("replicas=two", "/replicas': got string, want integer"),
        ("rebalance.mode=Sometimes", "/rebalance/mode': value must be one of"),
        ("prometheus.url=prometheus:9090", "/prometheus/url'"),
        ("replicas=2,leaderElection.enabled=false", "replicas > 1 needs leaderElection.enabled"),
        ("dashboards.label=-sidecar", "/dashboards/label'"),
        ("crossNamespaceQueries=maybe", "/crossNamespaceQueries': got string, want boolean"),
        ("evaluationWorkers=0", "/evaluationWorkers': minimum: got 0, want 1"),
        ("selectionWorkers=two", "/selectionWorkers'"),
        ("selectionBudget=off", "/selectionBudget': 'off' does not match pattern"),
        ("forecastWorkers=2", "additional properties 'forecastWorkers' not allowed"),
        # What the operator would refuse at start-up, refused before anything is installed.
        ("leaderElection.renewDeadline=15", "leaseDuration > renewDeadline > 1.2 x retryPeriod"),
        ("rebalance.budget=1001", "/rebalance/budget': maximum: got 1,001, want 1,000"),
        ("rebalance.weights.cpu=0,rebalance.weights.memory=0", "/rebalance/weights"),
        ("metrics.port=8080", "the two endpoints need a port each"),
    ],
)
def test_wrong_values_fail_at_install_time_with_a_clear_message(
    local_cluster: local.LocalCluster, setting: str, message: str
) -> None:
    rendered = template(local_cluster, setting)
    assert rendered.returncode != 0
    assert message in rendered.stderr
