from __future__ import annotations

import pytest

from predictive_scaler.cli import main


def test_run_with_bad_configuration_exits_2_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("PROMETHEUS_URL", raising=False)
    monkeypatch.setenv("PREDICTIVE_SCALER_METRICS_PORT", "zero")
    assert main(["run"]) == 2
    error = capsys.readouterr().err
    assert "PROMETHEUS_URL" in error
    assert "PREDICTIVE_SCALER_METRICS_PORT" in error
