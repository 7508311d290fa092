"""What the local control plane is made of: pinned versions and where each binary lives.

Every binary is built from the Go module proxy into a cache directory outside the
repository, in a folder named after its version, so a version bump builds anew
and an unchanged version is reused.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

KUBERNETES_VERSION = "v1.36.3"
ETCD_VERSION = "v3.6.16"
KWOK_VERSION = "v0.8.0"
HELM_VERSION = "v3.22.0"
# Helm v3.22.0's go.mod requires k8s.io/client-go v0.37.0: Kubernetes 1.37.
HELM_KUBERNETES_MINOR = "37"
METRICS_SERVER_VERSION = "v0.9.0"
DESCHEDULER_VERSION = "v0.36.0"
KEDA_VERSION = "v2.21.0"

CACHE_ENV = "PREDICTIVE_SCALER_CACHE"


@dataclass(frozen=True)
class GoBuild:
    """One builder module: a main module that requires `module` and builds `packages`."""

    name: str
    module: str
    version: str
    packages: tuple[str, ...]
    # A cold build (empty module and build caches) on the project's two-core
    # machine: the estimate of time left before this machine has built it once.
    typical_seconds: float
    ldflags: tuple[str, ...] = ()
    # Files of the module's own release copied beside the binaries (kwok's stages).
    release_files: tuple[str, ...] = ()
    # Raised when the same version must be built anew (its ldflags changed, say),
    # so that a cached binary of the old build is not reused.
    revision: int = 1

    @property
    def key(self) -> str:
        suffix = f"-r{self.revision}" if self.revision > 1 else ""
        return f"{self.name}-{self.version}{suffix}"

    def installed_files(self) -> tuple[str, ...]:
        return self.binaries_named() + tuple(Path(f).name for f in self.release_files)

    def binaries_named(self) -> tuple[str, ...]:
        """Executable names: the package's last path element, except etcd's module root."""
        return tuple(
            "etcd" if self.name == "etcd" else package.rsplit("/", 1)[-1]
            for package in self.packages
        )


def _kubernetes_version_ldflags(version: str) -> tuple[str, ...]:
    # What the release build stamps (hack/lib/version.sh), so `kubectl version`
    # and the discovery endpoint report a real release instead of v0.0.0-master,
    # which kwok and helm compare against.
    major, minor = version.lstrip("v").split(".")[:2]
    fields = {
        "gitVersion": version,
        "gitMajor": major,
        "gitMinor": minor,
        "gitTreeState": "clean",
        "buildDate": "1970-01-01T00:00:00Z",
    }
    return tuple(
        f"-X {package}.{field}={value}"
        for package in ("k8s.io/client-go/pkg/version", "k8s.io/component-base/version")
        for field, value in fields.items()
    )


KUBERNETES = GoBuild(
    name="kubernetes",
    module="k8s.io/kubernetes",
    version=KUBERNETES_VERSION,
    packages=(
        "k8s.io/kubernetes/cmd/kube-apiserver",
        "k8s.io/kubernetes/cmd/kube-controller-manager",
        "k8s.io/kubernetes/cmd/kube-scheduler",
        "k8s.io/kubernetes/cmd/kubectl",
    ),
    ldflags=_kubernetes_version_ldflags(KUBERNETES_VERSION),
    typical_seconds=410,  # measured 2026-11-23
)
ETCD = GoBuild(
    name="etcd",
    module="go.etcd.io/etcd/server/v3",
    version=ETCD_VERSION,
    packages=("go.etcd.io/etcd/server/v3",),
    typical_seconds=70,  # measured 2026-11-23
)
KWOK = GoBuild(
    name="kwok",
    module="sigs.k8s.io/kwok",
    version=KWOK_VERSION,
    packages=("sigs.k8s.io/kwok/cmd/kwok",),
    # The node and pod lifecycles (initialise, heartbeat with lease, ready,
    # complete, delete), kubelet-style resource metrics, and usage read from
    # the `kwok.x-k8s.io/usage-cpu|memory` pod annotations.
    release_files=(
        "kustomize/stage/node/fast/node-initialize.yaml",
        "kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
        "kustomize/stage/pod/fast/pod-ready.yaml",
        "kustomize/stage/pod/fast/pod-complete.yaml",
        "kustomize/stage/pod/fast/pod-delete.yaml",
        "kustomize/metrics/resource/metrics-resource.yaml",
        "kustomize/metrics/usage/usage-from-annotation.yaml",
    ),
    typical_seconds=105,  # measured 2026-11-23
)
HELM = GoBuild(
    name="helm",
    module="helm.sh/helm/v3",
    version=HELM_VERSION,
    packages=("helm.sh/helm/v3/cmd/helm",),
    ldflags=(
        f"-X helm.sh/helm/v3/internal/version.version={HELM_VERSION}",
        # The Kubernetes version `helm template` and `helm lint` assume without a
        # cluster, as helm's Makefile stamps it (its client-go's minor version):
        # unstamped it is 1.20, which the chart's kubeVersion refuses.
        *(
            f"-X helm.sh/helm/v3/pkg/{package}.{field}={value}"
            for package in ("chartutil", "lint/rules")
            for field, value in (
                ("k8sVersionMajor", "1"),
                ("k8sVersionMinor", HELM_KUBERNETES_MINOR),
            )
        ),
    ),
    typical_seconds=110,  # measured 2026-11-23
    revision=2,  # stamped with its Kubernetes version
)
METRICS_SERVER = GoBuild(
    name="metrics-server",
    module="sigs.k8s.io/metrics-server",
    version=METRICS_SERVER_VERSION,
    packages=("sigs.k8s.io/metrics-server/cmd/metrics-server",),
    typical_seconds=170,  # measured 2026-11-24, after kubernetes (shared build cache)
)
DESCHEDULER = GoBuild(
    name="descheduler",
    module="sigs.k8s.io/descheduler",
    version=DESCHEDULER_VERSION,
    packages=("sigs.k8s.io/descheduler/cmd/descheduler",),
    typical_seconds=155,  # measured 2026-11-24, after metrics-server
)
# KEDA's operator (scalers, ScaledObject controller, the gRPC metrics service)
# and its external-metrics API server, the third scaler of the demo.
KEDA = GoBuild(
    name="keda",
    module="github.com/kedacore/keda/v2",
    version=KEDA_VERSION,
    packages=(
        "github.com/kedacore/keda/v2/cmd/operator",
        "github.com/kedacore/keda/v2/cmd/adapter",
    ),
    # Its CRDs (the operator watches every kind, so all must exist) and the
    # operator's ClusterRole and Role, applied by `localcluster.keda`.
    release_files=(
        "config/crd/bases/keda.sh_scaledobjects.yaml",
        "config/crd/bases/keda.sh_scaledjobs.yaml",
        "config/crd/bases/keda.sh_triggerauthentications.yaml",
        "config/crd/bases/keda.sh_clustertriggerauthentications.yaml",
        "config/crd/bases/eventing.keda.sh_cloudeventsources.yaml",
        "config/crd/bases/eventing.keda.sh_clustercloudeventsources.yaml",
        "config/rbac/role.yaml",
    ),
    typical_seconds=410,  # measured 2026-11-24, after the others (shared caches)
)
GO_BUILDS = (ETCD, KUBERNETES, KWOK, HELM, METRICS_SERVER, DESCHEDULER, KEDA)


def cache_root() -> Path:
    """`$PREDICTIVE_SCALER_CACHE`, else `$XDG_CACHE_HOME/predictive-scaler`, else ~/.cache/…"""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "predictive-scaler"


@dataclass(frozen=True)
class Binaries:
    """Paths of every executable the control plane runs."""

    etcd: Path
    kube_apiserver: Path
    kube_controller_manager: Path
    kube_scheduler: Path
    kubectl: Path
    kwok: Path
    helm: Path
    metrics_server: Path
    descheduler: Path
    keda_operator: Path
    keda_adapter: Path
    prometheus: Path

    @classmethod
    def in_cache(cls, root: Path, prometheus: Path) -> Binaries:
        def built(build: GoBuild, binary: str) -> Path:
            return root / "bin" / build.key / binary

        return cls(
            etcd=built(ETCD, "etcd"),
            kube_apiserver=built(KUBERNETES, "kube-apiserver"),
            kube_controller_manager=built(KUBERNETES, "kube-controller-manager"),
            kube_scheduler=built(KUBERNETES, "kube-scheduler"),
            kubectl=built(KUBERNETES, "kubectl"),
            kwok=built(KWOK, "kwok"),
            helm=built(HELM, "helm"),
            metrics_server=built(METRICS_SERVER, "metrics-server"),
            descheduler=built(DESCHEDULER, "descheduler"),
            keda_operator=built(KEDA, "operator"),
            keda_adapter=built(KEDA, "adapter"),
            prometheus=prometheus,
        )

    def missing(self) -> list[Path]:
        return [path for path in vars(self).values() if not path.is_file()]

    def kwok_release_files(self) -> list[Path]:
        return [self.kwok.parent / Path(name).name for name in KWOK.release_files]

    def keda_release_files(self) -> list[Path]:
        return [self.keda_operator.parent / Path(name).name for name in KEDA.release_files]
