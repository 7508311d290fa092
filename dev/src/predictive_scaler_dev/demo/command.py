"""``predictive-scaler demo``: the whole product on the local cluster in about four minutes."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from predictive_scaler.cli.arguments import positive_int
from predictive_scaler_dev.demo.interrupts import interrupt_on_signals
from predictive_scaler_dev.demo.scenario import Scenario
from predictive_scaler_dev.demo.session import DemoError, DemoOptions, run_demo
from predictive_scaler_dev.localcluster import ClusterError
from predictive_scaler_dev.localcluster.build import BuildError

HELP = """\
Brings up the local control plane (building what is missing, once), applies
the CRD, three identical Deployments and a PredictiveScaler, starts the
operator, and replays one day of the bundled NASA HTTP trace as each
Deployment's CPU load, 15 trace minutes every 2 s. The other two are scaled by
the real HPA controller (reading metrics-server) and by KEDA (its Prometheus
scaler). A live view shows load, forecast, replicas and the next action; the
summary compares the operator with both, measured in the cluster, and with the
reactive HPA algorithm replayed on the same load, and a PNG shows all four.
Everything it created is removed at the end, also on Ctrl-C.
"""


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "demo",
        help="replay a real trace against the operator on a local cluster",
        description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=Path("predictive-scaler-demo"),
        help="folder for demo.png, summary.json and operator.log (default: %(default)s)",
    )
    parser.add_argument(
        "--start-hour", type=int, default=0, help="trace hour to start at (default: %(default)s)"
    )
    parser.add_argument(
        "--hours", type=positive_int, default=24, help="trace hours to replay (default: 24)"
    )
    parser.add_argument(
        "--seconds-per-step",
        type=float,
        default=2.0,
        help="wall seconds per 15-minute step of the trace (default: %(default)s)",
    )
    parser.add_argument(
        "--keep-cluster",
        action="store_true",
        help="leave the local cluster running when the demo started it",
    )
    parser.set_defaults(serve=serve)


def serve(args: argparse.Namespace) -> int:
    try:
        scenario = Scenario(
            seconds_per_step=args.seconds_per_step, start_hour=args.start_hour, hours=args.hours
        )
    except ValueError as error:
        print(f"predictive-scaler demo: error: {error}", file=sys.stderr)
        return 2
    try:  # before a cluster is started for files that cannot be written
        args.output.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        print(
            f"predictive-scaler demo: error: --output {args.output}: {error.strerror or error}",
            file=sys.stderr,
        )
        return 2
    options = DemoOptions(scenario, args.output, keep_cluster=args.keep_cluster)
    restore = interrupt_on_signals()
    try:
        run_demo(options, sys.stdout)
    except KeyboardInterrupt:
        print("predictive-scaler demo: interrupted; everything it started is stopped", flush=True)
        return 130
    except (DemoError, ClusterError, BuildError, TimeoutError) as error:
        print(f"predictive-scaler demo: failed: {error}", file=sys.stderr)
        return 1
    finally:
        restore()
    return 0
