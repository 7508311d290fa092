"""How much the replay's one decision per step changes the HPA baseline.

The HPA controller decides every 15 s; the replay decides once per trace
step (a minute, five) on that step's mean. To bound the difference the load
is replayed on a finer grid, each step's mean held over its sub-steps (as
the demo holds it), with the start-up and the scored window in sub-steps, so
the HPA decides every 15 s and sees each sub-step's load 15 s late, as it
sees metrics-server's. Figures stay in minutes, so both grids compare.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.scaling import DEFAULT_BEHAVIOR
from predictive_scaler.simulation.hpa import SYNC_PERIOD_SECONDS, HpaPolicy
from predictive_scaler.simulation.replay import Outcome, ReplayConfig, initial_replicas, replay

# The baseline variants every cadence report has: an HPA without behavior (the
# legacy path) and one with the default behavior, each per step and every 15 s.
VARIANTS = ("legacy", "behavior", "legacy, every 15 s", "behavior, every 15 s")


def upsampled(
    load: FloatArray, config: ReplayConfig, seconds: float
) -> tuple[FloatArray, ReplayConfig]:
    """``load`` on a grid of ``seconds`` (each step's mean held), and the same replay on it."""
    factor = max(1, math.floor(config.step_seconds / seconds + 1e-9))
    return np.repeat(load, factor), replace(
        config,
        step_seconds=config.step_seconds / factor,
        startup_steps=config.startup_steps * factor,
        start=config.start * factor,
    )


def hpa_variants(load: FloatArray, config: ReplayConfig, utilisation: float) -> dict[str, Outcome]:
    """The HPA baseline four ways (:data:`VARIANTS`), from the same initial replicas."""
    initial = initial_replicas(load, config, utilisation)
    fine_load, fine = upsampled(load, config, SYNC_PERIOD_SECONDS)
    runs = {
        "legacy": (load, config, None),
        "behavior": (load, config, DEFAULT_BEHAVIOR),
        "legacy, every 15 s": (fine_load, fine, None),
        "behavior, every 15 s": (fine_load, fine, DEFAULT_BEHAVIOR),
    }
    return {
        name: replay(
            series, HpaPolicy(on, utilisation, behavior=behavior), on, initial=initial
        ).outcome
        for name, (series, on, behavior) in runs.items()
    }
