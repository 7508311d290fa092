"""The operator image, run as the chart would run it, scales a workload and serves its endpoints.

The image is the one `make image` builds from the Dockerfile (buildah on a Debian
base, no daemon). Its own entrypoint runs as its own non-root user, configured
by the environment of the chart's installed Deployment and authenticated by the
chart's ServiceAccount through the in-cluster files a kubelet would mount.
"""

from __future__ import annotations

import subprocess
import urllib.request
from pathlib import Path
from typing import Any

from kubernetes import client

import predictive_scaler_dev.localcluster as local
from predictive_scaler.operator.resource import GROUP, PLURAL, VERSION
from predictive_scaler_dev.demo.load import LoadDriver
from predictive_scaler_dev.demo.process import free_port
from predictive_scaler_dev.localcluster.image import BuiltImage
from predictive_scaler_dev.localcluster.image_store import Container, ImageStore
from tests.fixtures.chart import InstallChart, service_account_mount
from tests.fixtures.cluster import create_deployment, wait_for
from tests.fixtures.image import ImageOperatorProcess, chart_environment, innermost
from tests.fixtures.operator import replicas, samples, scaler

IMAGE_USER = 10001  # the Dockerfile's USER, and the chart's runAsUser


def uid_of(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Uid:"):
            return int(line.split()[1])
    raise AssertionError(f"no Uid line for {pid}")


def test_the_image_runs_the_operator_with_the_charts_settings_and_identity(
    operator_image: BuiltImage,
    image_container: Container,
    install_chart: InstallChart,
    local_cluster: local.LocalCluster,
    core_v1: client.CoreV1Api,
    apps_v1: client.AppsV1Api,
    custom_objects: client.CustomObjectsApi,
    namespace: str,
    tmp_path: Path,
) -> None:
    metrics_port, liveness_port = free_port(), free_port()
    release = install_chart(
        {
            "namespaces": [namespace],
            "metrics.port": metrics_port,
            "livenessPort": liveness_port,
            "prometheus.scrapeInterval": f"{local_cluster.scrape_interval_seconds:g}s",
            "rebalance.mode": "Off",
        }
    )
    config = ImageStore.default().config(operator_image.reference)
    entrypoint, command = config["Entrypoint"], config["Cmd"]
    assert isinstance(entrypoint, list)
    assert isinstance(command, list)
    assert [*entrypoint, *command] == ["predictive-scaler", "run"]

    create_deployment(apps_v1, namespace, "web", 2, cpu_request="1")
    body = scaler(
        "web", "web", metric={"resource": "cpu", "targetPerReplica": "500m"}, min_replicas=2
    )
    custom_objects.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, body)
    operator = ImageOperatorProcess(
        local_cluster,
        namespace,
        tmp_path / "operator.log",
        metrics_port=metrics_port,
        liveness_port=liveness_port,
        container=image_container,
        entrypoint=[*entrypoint, *command],
        chart_env=chart_environment(apps_v1, namespace, release),
        service_account=service_account_mount(
            local_cluster, namespace, release, tmp_path / "serviceaccount"
        ),
    )
    try:
        try:
            with LoadDriver(core_v1, apps_v1, namespace, "web", lambda _: 1.7):
                operator.start(timeout=120)  # the image's Python compiles nothing: a read-only tree
                inside = innermost(operator.pid)
                # The program inside is the image's entrypoint in the image's tree (this host
                # has no /venv), run by the image's user, not root.
                assert "/venv/bin/predictive-scaler" in Path(f"/proc/{inside}/cmdline").read_text()
                assert (
                    Path("/proc") / str(inside) / "root" / "venv/bin/predictive-scaler"
                ).is_file()
                assert not Path("/venv").exists()
                assert uid_of(inside) == IMAGE_USER

                wait_for(
                    lambda: replicas(apps_v1, namespace, "web") > 2,
                    timeout=120,
                    what=f"a scale-up by the operator in the image ({operator.log})",
                )
                with urllib.request.urlopen(
                    f"http://127.0.0.1:{liveness_port}/healthz", timeout=5
                ) as response:
                    assert response.status == 200
                desired = (("kind", "desired"), ("name", "web"), ("namespace", namespace))
                # The evaluation that patched the scale publishes its metrics just after it.
                wait_for(
                    lambda: samples(operator, "predictive_scaler_replicas").get(desired, 0) > 2,
                    what="the scale-up's desired replicas on /metrics",
                )
                # The chart turns leader election on: this replica holds the release's Lease.
                assert samples(operator, "predictive_scaler_leader") == {(): 1.0}
                log = operator.log_tail(400)
                assert "Forbidden" not in log
        finally:
            custom_objects.delete_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "web")

            def released() -> bool:
                found: Any = custom_objects.list_namespaced_custom_object(
                    GROUP, VERSION, namespace, PLURAL
                )
                return not found["items"]

            wait_for(
                released, timeout=60, what="the operator in the image to release its finalizer"
            )
    finally:
        operator.stop()
    assert operator.process is not None
    assert operator.process.returncode == 0, operator.log_tail()


def test_the_image_carries_the_operator_and_none_of_the_development_tools(
    image_container: Container,
) -> None:
    probe = (
        "import importlib.util as u; "
        "print(*(m for m in ('predictive_scaler', 'predictive_scaler_dev', 'cryptography',"
        " 'matplotlib') if u.find_spec(m)))"
    )
    found = subprocess.run(
        image_container.run_command(["/venv/bin/python", "-c", probe], env={}),
        capture_output=True,
        text=True,
        check=True,
    )
    assert found.stdout.split() == ["predictive_scaler"], found.stdout + found.stderr
    commands = subprocess.run(
        image_container.run_command(["predictive-scaler", "--help"], env={}),
        capture_output=True,
        text=True,
        check=True,
    )
    assert "{run,forecast,backtest}" in commands.stdout
