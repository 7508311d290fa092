"""``predictive-scaler run``: the operator, configured from environment variables."""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import sys
from typing import Any

import kopf
from kubernetes import client, config

from predictive_scaler.operator.handlers import OperatorState
from predictive_scaler.operator.kube import Kubernetes
from predictive_scaler.operator.prometheus import PrometheusSource
from predictive_scaler.operator.rebalancer import Rebalancer
from predictive_scaler.operator.reconcile import Evaluator
from predictive_scaler.operator.settings import OperatorSettings, SettingsError

HELP = """Run the operator. Configuration comes from the environment:
  PROMETHEUS_URL                         where the load history is queried (required)
  PREDICTIVE_SCALER_NAMESPACES           comma-separated namespaces to watch (default: all)
  PREDICTIVE_SCALER_PEERING              kopf peering name, for several replicas (standalone)
  PREDICTIVE_SCALER_BIND_ADDRESS         address of the metrics and liveness endpoints (0.0.0.0)
  PREDICTIVE_SCALER_METRICS_PORT         Prometheus metrics port (8000)
  PREDICTIVE_SCALER_LIVENESS_PORT        liveness endpoint port, path /healthz (8080)
  PREDICTIVE_SCALER_SCRAPE_INTERVAL      Prometheus's scrape interval, sizes rate() windows (30s)
  PREDICTIVE_SCALER_QUERY_TIMEOUT        timeout of one Prometheus query (10s)
  PREDICTIVE_SCALER_FORECAST_WORKERS     threads that evaluate objects (2)
  PREDICTIVE_SCALER_REBALANCE_MODE       Off | DryRun | Auto: move opted-in pods off hot nodes
  PREDICTIVE_SCALER_REBALANCE_INTERVAL   how often the rebalancer runs (60s)
  PREDICTIVE_SCALER_REBALANCE_COOLDOWN   a moved workload or node is left alone this long (10m)
  PREDICTIVE_SCALER_REBALANCE_BUDGET     evictions per cycle (5); _PER_NODE (2), _PER_WORKLOAD (1)
  PREDICTIVE_SCALER_REBALANCE_THRESHOLD  node score below which a node is high-load (-0.1)
  PREDICTIVE_SCALER_REBALANCE_WEIGHTS    metric weights (cpu=1,memory=1,network=1,disk=1)
  PREDICTIVE_SCALER_REBALANCE_NODES      label selector of the nodes to balance (all)
The Kubernetes connection is the in-cluster service account, else KUBECONFIG."""


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "run",
        help="run the operator (configured from environment variables)",
        description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--verbose", action="store_true", help="debug logging")
    parser.set_defaults(serve=serve)


def serve(args: argparse.Namespace) -> int:
    try:
        settings = OperatorSettings.from_environment(os.environ)
    except SettingsError as error:
        print(f"predictive-scaler run: bad configuration:\n{error}", file=sys.stderr)
        return 2
    try:
        config.load_config()  # type: ignore[no-untyped-call]
    except config.ConfigException as error:
        print(f"predictive-scaler run: no Kubernetes connection: {error}", file=sys.stderr)
        return 2
    kopf.configure(verbose=args.verbose)
    api = client.ApiClient()
    # The rebalancer's reading of node usage also ranks pods for scale-in, even
    # when moving pods is Off.
    balancer = Rebalancer(api, settings)
    state = OperatorState(
        settings=settings,
        evaluator=Evaluator(
            Kubernetes(api),
            PrometheusSource(settings.prometheus, settings.query_timeout),
            settings,
            scale_in=balancer.mark_scale_in,
        ),
        executor=concurrent.futures.ThreadPoolExecutor(
            settings.forecast_workers, thread_name_prefix="evaluate"
        ),
        rebalancer=None if settings.rebalance_mode == "Off" else balancer,
    )
    liveness = f"http://{settings.bind_address}:{settings.liveness_port}/healthz"
    try:
        kopf.run(
            clusterwide=not settings.namespaces,
            namespaces=settings.namespaces,
            standalone=not settings.peering,
            peering_name=settings.peering or None,
            liveness_endpoint=liveness,
            memo=kopf.Memo(state=state),
        )
    finally:
        state.executor.shutdown(wait=False, cancel_futures=True)
    return 0
