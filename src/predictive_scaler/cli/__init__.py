"""The ``predictive-scaler`` command line: ``run``, ``forecast`` and ``backtest``, and plug-ins.

A distribution installed beside this one may add subcommands through the
``predictive_scaler.commands`` entry-point group: the repository's
``predictive-scaler-dev`` package adds ``demo`` that way, so the runtime
package (and the image) carries no local cluster and no demo.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib.metadata import entry_points

from pydantic import BaseModel

from predictive_scaler.cli import backtest, forecast, run

PLUGINS = "predictive_scaler.commands"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="predictive-scaler",
        description="Scale Kubernetes workloads ahead of their forecast load.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    run.add_parser(commands)
    for plugin in sorted(entry_points(group=PLUGINS), key=lambda found: found.name):
        plugin.load()(commands)
    forecast.add_parser(commands)
    backtest.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand; bad input exits 2 with one line naming the problem."""
    args = build_parser().parse_args(argv)
    if hasattr(args, "serve"):
        exit_code: int = args.serve(args)
        return exit_code
    try:
        report: BaseModel = args.run(args)
    except (OSError, ValueError, argparse.ArgumentTypeError) as error:
        print(f"predictive-scaler {args.command}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        # Ctrl-C on a long backtest: nothing half-written to report, and no traceback.
        print(f"predictive-scaler {args.command}: interrupted", file=sys.stderr)
        return 130
    print(report.model_dump_json(indent=2) if args.json else args.render(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
