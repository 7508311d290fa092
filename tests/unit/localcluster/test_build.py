from __future__ import annotations

import re

import pytest

from predictive_scaler_dev.localcluster.build import (
    BuildError,
    builder_go_mod,
    require_go,
    staging_replacements,
    versioned_replacements,
)
from predictive_scaler_dev.localcluster.components import ETCD, HELM, KUBERNETES, KWOK, cache_root
from tests.fixtures.chart import CHART

KUBERNETES_GO_MOD = """module k8s.io/kubernetes

go 1.26.0

require (
\tk8s.io/api v0.0.0
\tk8s.io/client-go v0.0.0
)

replace (
\tk8s.io/api => ./staging/src/k8s.io/api
\tk8s.io/client-go => ./staging/src/k8s.io/client-go
\tk8s.io/kube-openapi => k8s.io/kube-openapi v0.0.0-20250101
)
"""


def test_every_staging_replace_becomes_its_published_release() -> None:
    assert staging_replacements(KUBERNETES_GO_MOD, "v1.36.3") == [
        "k8s.io/api => k8s.io/api v0.36.3",
        "k8s.io/client-go => k8s.io/client-go v0.36.3",
    ]


def test_a_dependency_s_published_replaces_are_carried_and_local_ones_dropped() -> None:
    go_mod = """module sigs.k8s.io/descheduler

replace k8s.io/kube-openapi => k8s.io/kube-openapi v0.0.0-20260512234627-ef417d054102

replace (
\tfoo.io/a => ./local/a
\tfoo.io/b v1.0.0 => bar.io/b v1.2.0
)
"""
    assert versioned_replacements(go_mod) == [
        "k8s.io/kube-openapi => k8s.io/kube-openapi v0.0.0-20260512234627-ef417d054102",
        "foo.io/b v1.0.0 => bar.io/b v1.2.0",
    ]


def test_a_go_mod_without_staging_modules_is_an_error() -> None:
    with pytest.raises(BuildError, match="staging"):
        staging_replacements("module example.com/x\n", "v1.36.3")


def test_builder_module_requires_the_release_and_replaces_staging() -> None:
    text = builder_go_mod(KUBERNETES, "1.26", ["k8s.io/api => k8s.io/api v0.36.3"])
    assert f"require k8s.io/kubernetes {KUBERNETES.version}\n" in text
    assert "go 1.26\n" in text
    assert "replace (\n\tk8s.io/api => k8s.io/api v0.36.3\n)" in text
    assert "replace" not in builder_go_mod(ETCD, "1.26")


def test_binaries_are_named_after_their_commands_and_etcd_after_itself() -> None:
    assert KUBERNETES.binaries_named() == (
        "kube-apiserver",
        "kube-controller-manager",
        "kube-scheduler",
        "kubectl",
    )
    assert ETCD.binaries_named() == ("etcd",)
    assert "pod-ready.yaml" in KWOK.installed_files()


def test_cache_is_keyed_by_version_outside_the_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PREDICTIVE_SCALER_CACHE", "/tmp/elsewhere")
    assert str(cache_root()) == "/tmp/elsewhere"
    monkeypatch.delenv("PREDICTIVE_SCALER_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", "/tmp/xdg")
    assert str(cache_root()) == "/tmp/xdg/predictive-scaler"
    assert KUBERNETES.key == f"kubernetes-{KUBERNETES.version}"
    # A rebuild of the same version (new ldflags) gets a folder of its own.
    assert HELM.key == f"helm-{HELM.version}-r{HELM.revision}"


def test_helm_assumes_a_kubernetes_the_chart_accepts_when_no_cluster_is_asked() -> None:
    chart = (CHART / "Chart.yaml").read_text()
    required = re.search(r'^kubeVersion: ">=1\.(\d+)\.0-0"$', chart, re.MULTILINE)
    assert required is not None, chart
    stamped = {flag.split("=")[0].rsplit(".", 1)[-1]: flag.split("=")[1] for flag in HELM.ldflags}
    assert stamped["k8sVersionMajor"] == "1"
    assert int(stamped["k8sVersionMinor"]) >= int(required.group(1))


def test_an_older_local_go_is_refused_with_what_to_do() -> None:
    with pytest.raises(
        BuildError, match=r"needs Go 1\.26\.0 or newer; this machine has Go 1\.25\.3"
    ):
        require_go("1.26.0", "1.25.3", KUBERNETES)
    require_go("1.26", "1.26.8", KUBERNETES)
