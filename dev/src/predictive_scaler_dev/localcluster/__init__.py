"""A real control plane with kwok nodes and Prometheus on loopback, for tests and the demo.

`hack/cluster` (this package's `__main__`) is the command; the names below are
what tests and the demo use from Python.
"""

from predictive_scaler_dev.localcluster.cluster import (
    down,
    restart_component,
    status,
    stop_component,
    up,
)
from predictive_scaler_dev.localcluster.configs import STARTUP_DELAY_ANNOTATION
from predictive_scaler_dev.localcluster.kube import NodeShape, deployment_manifest, set_pod_usage
from predictive_scaler_dev.localcluster.state import (
    ClusterConfig,
    ClusterError,
    LocalCluster,
    Phase,
    connect,
    default_run_dir,
    read_state,
)

__all__ = [
    "STARTUP_DELAY_ANNOTATION",
    "ClusterConfig",
    "ClusterError",
    "LocalCluster",
    "NodeShape",
    "Phase",
    "connect",
    "default_run_dir",
    "deployment_manifest",
    "down",
    "read_state",
    "restart_component",
    "set_pod_usage",
    "status",
    "stop_component",
    "up",
]
