"""Test configuration: markers by folder, deterministic Hypothesis, the real traces."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings

from predictive_scaler.forecasting.forecast import FloatArray

# Same examples on every run, so a CI failure reproduces locally.
settings.register_profile("project", derandomize=True, deadline=None, print_blob=True)
settings.load_profile("project")

# Fixtures of the local control plane; a test that asks for none of them starts nothing.
pytest_plugins = [
    "tests.fixtures.cluster",
    "tests.fixtures.operator",
    "tests.fixtures.chart",
    "tests.fixtures.image",
]

# The real traces live in the repository (compressed), so a clone alone runs every test.
TRACES = Path(__file__).resolve().parents[1] / "traces"
MARKERS_BY_FOLDER = {
    "unit": pytest.mark.unit,
    "integration": pytest.mark.integration,
    "e2e": pytest.mark.e2e,
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for folder, marker in MARKERS_BY_FOLDER.items():
            if folder in item.path.parts:
                item.add_marker(marker)


@pytest.fixture(scope="session")
def traces_dir() -> Path:
    """The repository's public traces; their absence is a failure, not a skip."""
    if not (TRACES / "README.md").is_file():
        pytest.fail(f"real traces not found at {TRACES}: the repository holds them in traces/")
    return TRACES


def seasonal_load(n: int = 300, season: int = 24, seed: int = 7) -> FloatArray:
    """A positive load with trend, daily-like season and noise."""
    rng = np.random.default_rng(seed)
    t = np.arange(n, dtype=np.float64)
    return 100.0 + 0.2 * t + 30.0 * np.sin(2 * np.pi * t / season) + rng.normal(0, 4, n)
