from __future__ import annotations

import re
import subprocess
import sys

import pytest

from predictive_scaler.cli import main
from predictive_scaler.cli.run import HELP
from predictive_scaler.operator.settings import VARIABLES


def test_run_with_bad_configuration_exits_2_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("PROMETHEUS_URL", raising=False)
    monkeypatch.setenv("PREDICTIVE_SCALER_METRICS_PORT", "zero")
    assert main(["run"]) == 2
    error = capsys.readouterr().err
    assert "PROMETHEUS_URL" in error
    assert "PREDICTIVE_SCALER_METRICS_PORT" in error


def test_the_run_command_registers_every_kopf_handler() -> None:
    # In a fresh interpreter: in this one, another test may have imported a
    # handler module already, and the check would pass whatever `run` imports.
    script = (
        "import kopf, predictive_scaler.cli.run\n"
        "registry = kopf.get_default_registry()\n"
        "for kind in (registry._activities, registry._spawning, registry._indexing):\n"
        "    print(*sorted(handler.id for handler in kind.get_all_handlers()))\n"
    )
    shown = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    activities, daemons, indexes = (set(line.split()) for line in shown)
    assert {"configure", "stop_background_tasks"} <= activities
    assert daemons == {"evaluate"}
    assert indexes == {"hpa_targets", "scaler_targets"}


def test_run_help_names_every_variable_the_operator_reads() -> None:
    listed = set(re.findall(r"^  ([A-Z_]+)\s", HELP, re.MULTILINE))
    assert listed == set(VARIABLES.values())
