"""`python -m predictive_scaler_dev.localcluster build|up|down|status|image` (hack/cluster)."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from predictive_scaler_dev.localcluster.build import BuildError, build_all
from predictive_scaler_dev.localcluster.cluster import down, status, up
from predictive_scaler_dev.localcluster.components import cache_root
from predictive_scaler_dev.localcluster.image import build_image
from predictive_scaler_dev.localcluster.image_store import ImageStore
from predictive_scaler_dev.localcluster.kube import NodeShape
from predictive_scaler_dev.localcluster.processes import ComponentFailedError
from predictive_scaler_dev.localcluster.state import ClusterConfig, ClusterError, default_run_dir


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hack/cluster",
        description="A local Kubernetes control plane with kwok nodes and Prometheus, on loopback.",
    )
    parser.add_argument(
        "--run-dir",
        type=Path,
        default=None,
        help=f"state, logs and env file of the running cluster (default {default_run_dir()})",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    build = commands.add_parser("build", help=f"build missing binaries into {cache_root()}/bin")
    build.add_argument("--force", action="store_true", help="rebuild even when cached")
    start = commands.add_parser(
        "up", help="build what is missing, start the cluster, write the env file"
    )
    start.add_argument("--nodes", type=int, default=3, help="kwok nodes to create (default 3)")
    start.add_argument("--node-cpu", default="16", help="CPU of each node (default 16)")
    start.add_argument("--node-memory", default="64Gi", help="memory of each node (default 64Gi)")
    start.add_argument(
        "--scrape-interval", type=float, default=2.0, help="Prometheus scrape interval, seconds"
    )
    start.add_argument(
        "--timeout", type=float, default=180.0, help="seconds each component may take to start"
    )
    commands.add_parser("down", help="stop the processes `up` started, remove the run directory")
    commands.add_parser("status", help="what runs, where, and its health (exit 1 if unhealthy)")
    image = commands.add_parser(
        "image",
        help="build the operator image from the Dockerfile with buildah (no daemon, no registry)",
    )
    image.add_argument(
        "--refresh-base", action="store_true", help="remake the Debian base (new security fixes)"
    )
    return parser


def _build(force: bool) -> int:
    report = build_all(force=force)
    print(f"built: {', '.join(report.built) or 'nothing'}")
    print(f"cached: {', '.join(report.reused) or 'nothing'}")
    print(f"took {report.seconds:.0f} s")
    return 0


def _image(refresh_base: bool) -> int:
    repo = Path(__file__).resolve().parents[4]
    if not (repo / "Dockerfile").is_file():
        print(f"error: no Dockerfile at {repo}: `image` builds from a checkout", file=sys.stderr)
        return 1
    store = ImageStore.default()
    built = build_image(repo, store, refresh_base=refresh_base)
    print(f"image {built.reference} ({built.size}) in {built.seconds:.0f} s, on {built.base}")
    print(f"  buildah storage: {store.driver} in {store.root}")
    print(f"  push with: {' '.join(store.buildah())} push {built.reference} docker://REGISTRY/NAME")
    return 0


def _up(args: argparse.Namespace, run_dir: Path) -> int:
    config = ClusterConfig(
        run_dir=run_dir,
        nodes=args.nodes,
        node_shape=NodeShape(cpu=args.node_cpu, memory=args.node_memory),
        scrape_interval_seconds=args.scrape_interval,
        timeout_seconds=args.timeout,
    )
    result = up(config)
    if result.build is not None and result.build.built:
        print(f"built {', '.join(result.build.built)} in {result.build.seconds:.0f} s")
    verb = "already running, reused" if result.reused else f"up in {result.seconds:.1f} s"
    print(f"local cluster {verb}")
    print(f"  API server  {result.cluster.ports.apiserver_url}")
    print(f"  Prometheus  {result.cluster.prometheus_url}")
    print(f"  source {result.cluster.layout.env_file}  # KUBECONFIG, PROMETHEUS_URL, PATH")
    return 0


def _down(run_dir: Path) -> int:
    stopped = down(run_dir)
    for item in stopped:
        print(f"{item.name:<24} pid {item.pid:<8} {item.how}")
    print("down" if stopped else f"nothing was running in {run_dir}")
    return 0


def _status(run_dir: Path) -> int:
    report = status(run_dir)
    if report.phase is None:
        print(f"no cluster in {run_dir}" + (f" ({report.error})" if report.error else ""))
        return 1
    print(f"{run_dir}: {report.phase}" + (f" ({report.error})" if report.error else ""))
    for component in report.components:
        if component.healthy:
            health = "healthy"
        else:
            health = "running, unhealthy" if component.running else "stopped"
        print(f"  {component.name:<24} pid {component.pid:<8} {health:<20} log {component.log}")
    if report.ports is not None:
        print(f"  API server  {report.ports.apiserver_url}")
        print(f"  Prometheus  {report.ports.prometheus_url}")
    if report.nodes_ready is not None:
        print(f"  nodes Ready: {report.nodes_ready}")
    return 0 if report.healthy else 1


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    run_dir: Path = args.run_dir or default_run_dir()
    try:
        if args.command == "build":
            return _build(args.force)
        if args.command == "up":
            return _up(args, run_dir)
        if args.command == "down":
            return _down(run_dir)
        if args.command == "image":
            return _image(args.refresh_base)
        return _status(run_dir)
    except (BuildError, ClusterError, ComponentFailedError, TimeoutError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
