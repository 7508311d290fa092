"""What the demo replays, and the objects it applies.

One day of the bundled NASA HTTP trace (Monday 3 July 1995) in 15-minute
steps, scaled to a CPU peak and replayed time-compressed: one step of the
trace lasts ``seconds_per_step`` seconds of wall time. The replay begins with
a warm-up from the hours before (the operator's history window), because a
workload that is worth scaling has a history in Prometheus; only what comes
after the warm-up is scored. The same numbers feed the reactive baseline's
replay, so both face the same load.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.localcluster import deployment_manifest
from predictive_scaler.operator.resource import GROUP, KIND, VERSION
from predictive_scaler.simulation import ReplayConfig
from predictive_scaler.traces import BUNDLED_COLUMN, bundled_trace_path, read_trace

NAMESPACE = "predictive-scaler-demo"
WORKLOAD = "web"
MINUTES_PER_DAY = 1440
TRACE_DAY = 2  # the bundled slice is 1-3 July 1995; the 3rd is a Monday
TRACE_LABEL = "NASA HTTP, Monday 3 July 1995"


@dataclass(frozen=True)
class Scenario:
    seconds_per_step: float = 2.0
    step_minutes: int = 15  # of trace time per replayed step
    start_hour: int = 0
    hours: int = 24
    peak_cores: float = 8.0
    capacity_cores: float = 1.0  # one replica's CPU request: what it serves at 100 %
    target_utilisation: float = 0.7  # for the scaler and the reactive baseline alike
    startup_steps: int = 1  # a new pod serves one step after it is created
    lead_steps: int = 3  # start-up, plus a scrape and the rate() window of slack
    min_replicas: int = 2
    max_replicas: int = 20
    warmup_steps: int = 20  # the scaler's history window, replayed before scoring starts

    def __post_init__(self) -> None:
        if not 0 <= self.start_hour < 24 or not 1 <= self.hours <= 24 - self.start_hour:
            raise ValueError("the replay must lie within the day: 0 <= start < start + hours <= 24")
        if self.seconds_per_step < 1:
            raise ValueError("seconds per step must be >= 1 (Prometheus scrapes every 2 s)")

    @property
    def steps(self) -> int:
        """Scored steps, after the warm-up."""
        return self.hours * 60 // self.step_minutes

    @property
    def warmup_seconds(self) -> float:
        return self.warmup_steps * self.seconds_per_step

    @property
    def duration_seconds(self) -> float:
        return (self.warmup_steps + self.steps) * self.seconds_per_step

    @property
    def compression(self) -> float:
        """Trace seconds per wall-clock second."""
        return self.step_minutes * 60 / self.seconds_per_step

    def load(self) -> FloatArray:
        """Cores per step, warm-up first; requests summed per step, the day peaks at peak_cores."""
        trace = np.asarray(read_trace(bundled_trace_path(), BUNDLED_COLUMN).values)
        per_step = trace[: trace.size - trace.size % self.step_minutes]
        per_step = per_step.reshape(-1, self.step_minutes).sum(axis=1)
        steps_per_day = MINUTES_PER_DAY // self.step_minutes
        day_start = TRACE_DAY * steps_per_day
        first = day_start + self.start_hour * 60 // self.step_minutes
        window = per_step[first - self.warmup_steps : first + self.steps]
        peak = per_step[day_start : day_start + steps_per_day].max()
        return np.asarray(window / peak * self.peak_cores, dtype=float)

    def load_at(self, load: FloatArray, seconds: float) -> float:
        """The step's load holds for the whole step, as in the replay model."""
        index = min(int(seconds // self.seconds_per_step), load.size - 1)
        return float(load[max(index, 0)])

    def clock(self, seconds: float) -> str:
        """Trace time of day (HH:MM) at ``seconds`` into the replay, warm-up included."""
        minutes = self.start_hour * 60 + (seconds - self.warmup_seconds) * self.compression / 60
        return f"{int(minutes // 60) % 24:02d}:{int(minutes % 60):02d}"

    def replay_config(self) -> ReplayConfig:
        """The baseline's physics in trace time: real HPA timings apply to real minutes."""
        return ReplayConfig(
            capacity=self.capacity_cores,
            startup_steps=self.startup_steps,
            step_seconds=self.step_minutes * 60.0,
            start=max(1, self.warmup_steps),
        )

    def initial_replicas(self, load: FloatArray) -> int:
        """The Deployment's replicas when the warm-up begins, by the replay model's rule."""
        first = load[: self.startup_steps + 1]
        need = self.replay_config().peak_need(first, self.target_utilisation)
        return min(max(need, self.min_replicas), self.max_replicas)

    def deployment(self, load: FloatArray) -> dict[str, Any]:
        return deployment_manifest(
            WORKLOAD,
            self.initial_replicas(load),
            cpu_request=f"{round(self.capacity_cores * 1000)}m",
            startup_delay=f"{self.startup_steps * self.seconds_per_step:g}s",
        )

    def scaler(self) -> dict[str, Any]:
        step = f"{self.seconds_per_step:g}s"
        per_replica = self.capacity_cores * self.target_utilisation
        return {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": KIND,
            "metadata": {"name": WORKLOAD},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": WORKLOAD},
                "minReplicas": self.min_replicas,
                "maxReplicas": self.max_replicas,
                "syncPeriod": step,
                "metric": {"resource": "cpu", "targetPerReplica": f"{round(per_replica * 1000)}m"},
                "forecast": {
                    "history": f"{self.warmup_steps * self.seconds_per_step:g}s",
                    "step": step,
                    "refresh": f"{10 * self.seconds_per_step:g}s",
                },
                "scaling": {
                    "mode": "Auto",
                    "leadTime": f"{self.lead_steps * self.seconds_per_step:g}s",
                    # The HPA's default behavior is in real seconds; here a step is
                    # compressed, so state the equivalent in replayed seconds.
                    "behavior": {
                        "scaleUp": {
                            "stabilizationWindowSeconds": 0,
                            "selectPolicy": "Max",
                            "policies": [
                                {"type": "Percent", "value": 100, "periodSeconds": 1},
                                {"type": "Pods", "value": 4, "periodSeconds": 1},
                            ],
                        },
                        "scaleDown": {
                            "stabilizationWindowSeconds": math.ceil(2 * self.seconds_per_step),
                            "policies": [{"type": "Percent", "value": 100, "periodSeconds": 1}],
                        },
                    },
                },
            },
        }
