"""``predictive-scaler run``: the operator, configured from environment variables."""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import signal
import sys
import threading
from typing import Any

import kopf
from kubernetes import config

# Importing these modules registers their kopf handlers.
from predictive_scaler.operator import handlers, lifecycle  # noqa: F401
from predictive_scaler.operator.apiclient import operator_api_client
from predictive_scaler.operator.kube import Kubernetes
from predictive_scaler.operator.leadership import Leadership
from predictive_scaler.operator.metric_sources import metric_source
from predictive_scaler.operator.ranking import ScaleInRanker
from predictive_scaler.operator.rebalancer import Rebalancer
from predictive_scaler.operator.reconcile import Evaluator
from predictive_scaler.operator.selection_workers import SelectionWorkers
from predictive_scaler.operator.settings import (
    OperatorSettings,
    SettingsError,
    misspelt_variables,
)
from predictive_scaler.operator.state import OperatorState

HELP = """Run the operator. Configuration comes from the environment:
  PREDICTIVE_SCALER_METRICS_SOURCE       prometheus (default) | metrics-api (metrics-server)
  PROMETHEUS_URL                         where load and usage are queried (with prometheus)
  PREDICTIVE_SCALER_NAMESPACES           comma-separated namespaces to watch (default: all)
  PREDICTIVE_SCALER_LEADER_ELECTION      a Lease name: of several replicas only its holder acts
  PREDICTIVE_SCALER_LEADER_ELECTION_NAMESPACE  the Lease's namespace (default)
  PREDICTIVE_SCALER_LEASE_DURATION       seconds before a silent holder's Lease is taken (15)
  PREDICTIVE_SCALER_LEASE_RENEW_DEADLINE seconds a holder keeps trying to renew, then stops (10)
  PREDICTIVE_SCALER_LEASE_RETRY_PERIOD   seconds between tries to acquire or renew (2)
  PREDICTIVE_SCALER_SHARD_SELECTOR       label selector: serve only the PredictiveScalers it selects
  PREDICTIVE_SCALER_BIND_ADDRESS         address of the metrics and liveness endpoints (0.0.0.0)
  PREDICTIVE_SCALER_METRICS_PORT         Prometheus metrics port (8000)
  PREDICTIVE_SCALER_LIVENESS_PORT        liveness endpoint port, path /healthz (8080)
  PREDICTIVE_SCALER_SCRAPE_INTERVAL      Prometheus's scrape interval, sizes rate() windows (30s)
  PREDICTIVE_SCALER_QUERY_TIMEOUT        timeout of one Prometheus query (10s)
  PREDICTIVE_SCALER_QUERY_MAX_SAMPLES    samples of a series one object's query may read (10000000)
  PREDICTIVE_SCALER_CROSS_NAMESPACE_QUERIES  true: a query may read other namespaces (false)
  PREDICTIVE_SCALER_EVALUATION_WORKERS   threads evaluating objects, fairly by namespace (4)
  PREDICTIVE_SCALER_SELECTION_WORKERS    processes selecting models (cores of the CPU limit)
  PREDICTIVE_SCALER_EVALUATION_BUDGET    wall time of one evaluation; bounds its queries (10s)
  PREDICTIVE_SCALER_SELECTION_BUDGET     CPU time of one selection, then the best is kept (10s)
  PREDICTIVE_SCALER_REBALANCE_MODE       Off | DryRun | Auto: move opted-in pods off hot nodes
                                         (default Auto, which evicts)
  PREDICTIVE_SCALER_REBALANCE_INTERVAL   how often the rebalancer runs (60s)
  PREDICTIVE_SCALER_REBALANCE_COOLDOWN   a moved pod's replacement stays put this long (10m)
  PREDICTIVE_SCALER_REBALANCE_SETTLE     a move's nodes and workload wait this long (3 rate windows)
  PREDICTIVE_SCALER_REBALANCE_BUDGET     evictions per cycle (5)
  PREDICTIVE_SCALER_REBALANCE_PER_NODE   evictions per node and cycle (2)
  PREDICTIVE_SCALER_REBALANCE_PER_WORKLOAD  evictions per workload and cycle (1)
  PREDICTIVE_SCALER_REBALANCE_THRESHOLD  node score below which a node is high-load (-0.1)
  PREDICTIVE_SCALER_REBALANCE_WEIGHTS    metric weights, of cpu and memory (cpu=1,memory=1)
  PREDICTIVE_SCALER_REBALANCE_NODES      label selector of the nodes to balance (all)
  PREDICTIVE_SCALER_REBALANCE_LOOKAHEAD  node CPU counts at its forecast peak this far ahead (5m)
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
    # Before the settings are checked: a misspelt variable may be why they fail.
    for warning in misspelt_variables(os.environ):
        print(f"predictive-scaler run: warning: {warning}", file=sys.stderr)
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
    api = operator_api_client(settings.evaluation_workers)
    lost: list[str] = []

    def leadership_lost() -> None:
        lost.append("Lease")
        # kopf's own graceful stop. (Its stop_flag would do the same, but it
        # waits for a thread-side flag in an executor thread that then holds
        # up the interpreter's exit after a plain SIGTERM.)
        os.kill(os.getpid(), signal.SIGTERM)
        # kopf stops its daemons gracefully; should one hang, the process must
        # still be gone before a standby may take the Lease.
        margin = settings.lease_duration - settings.lease_renew_deadline
        threading.Timer(max(1, margin - 1), os._exit, (1,)).start()

    leadership = None
    if settings.leader_election:
        leadership = Leadership(
            settings.leader_election,
            settings.leader_election_namespace,
            settings.lease_timings,
            on_lost=leadership_lost,
        )
        leadership.start()
    # One metric source and one adapter for the evaluations, the scale-in
    # ranking (which runs even when moving pods is Off) and the rebalancer.
    source = metric_source(settings, api)
    kube = Kubernetes(api)
    ranker = ScaleInRanker(kube, settings)
    state = OperatorState(
        settings=settings,
        kube=kube,
        selection_workers=SelectionWorkers(
            settings.selection_processes,
            budget_seconds=settings.selection_budget,
        ),
        evaluator=Evaluator(
            kube,
            source,
            settings,
            rank_scale_in=ranker.write_deletion_costs,
        ),
        executor=concurrent.futures.ThreadPoolExecutor(
            settings.evaluation_workers, thread_name_prefix="evaluate"
        ),
        rebalancer=None if settings.rebalance_mode == "Off" else Rebalancer(kube, settings, source),
        ranker=ranker,
        leadership=leadership,
    )
    liveness = f"http://{settings.bind_address}:{settings.liveness_port}/healthz"
    try:
        kopf.run(
            clusterwide=not settings.namespaces,
            namespaces=settings.namespaces,
            # One acting replica is the Lease's business, not kopf peering's.
            standalone=True,
            liveness_endpoint=liveness,
            memo=kopf.Memo(state=state),
        )
    finally:
        # No evaluation may still be running when a standby takes over.
        state.executor.shutdown(wait=True, cancel_futures=True)
        state.background.shutdown(wait=True, cancel_futures=True)
        state.selection_workers.shutdown()
        if leadership is not None:
            leadership.release()
    if lost:
        print("predictive-scaler run: lost the Lease; exiting", file=sys.stderr)
        return 1
    return 0
