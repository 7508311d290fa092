"""What the demo replays, and the objects it applies.

One day of the bundled NASA HTTP trace (Monday 3 July 1995) in 15-minute
steps, scaled to a CPU peak and replayed time-compressed: one step of the
trace lasts ``seconds_per_step`` seconds of wall time. A workload worth
scaling has days of history in Prometheus, so the days before (1 and 2 July)
are there too: the part the cluster does not replay live is backfilled into
Prometheus's past, compressed alike, ending where the live replay begins
(:mod:`predictive_scaler_dev.demo.history`). The live replay begins with a
warm-up from the hours before, which is not scored. The same load drives a
second, identical Deployment scaled by a real autoscaling/v2 HPA (the
controller in kube-controller-manager, reading metrics-server), a third scaled
by KEDA (a ScaledObject with its Prometheus scaler, reading the same CPU query
the operator reads), and feeds the reactive baseline's replay, so all four face
the same load.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.operator.prometheus import resource_query
from predictive_scaler.operator.resource import GROUP, KIND, VERSION, ScaleTargetRef
from predictive_scaler.operator.settings import recent_rate_window
from predictive_scaler.scaling.behavior import DEFAULT_BEHAVIOR, PREDICTIVE_BEHAVIOR, Behavior
from predictive_scaler.simulation import ReplayConfig
from predictive_scaler.traces import BUNDLED_COLUMN, bundled_trace_path, read_trace
from predictive_scaler_dev.localcluster import deployment_manifest

NAMESPACE = "predictive-scaler-demo"
WORKLOAD = "web"
HPA_WORKLOAD = "web-hpa"  # the same Deployment, scaled by the real HPA
KEDA_WORKLOAD = "web-keda"  # and again, scaled by KEDA
# KEDA's defaults, in real seconds, compressed like the behaviors.
KEDA_POLLING_SECONDS = 30
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
    # The scaler is created once Prometheus has loaded the backfilled history,
    # which it does at its next block reload (once a minute); the live warm-up
    # covers that minute and the scaler's first decisions before scoring starts.
    min_warmup_seconds: float = 80.0

    def __post_init__(self) -> None:
        if not 0 <= self.start_hour < 24 or not 1 <= self.hours <= 24 - self.start_hour:
            raise ValueError("the replay must lie within the day: 0 <= start < start + hours <= 24")
        if self.seconds_per_step < 1:
            raise ValueError("seconds per step must be >= 1 (Prometheus scrapes every 2 s)")
        if self.seconds_per_step != round(self.seconds_per_step):
            raise ValueError("seconds per step must be whole: the scaler's durations are")
        if self.first_live_step < 0:
            raise ValueError("the warm-up would begin before the bundled trace does")

    @property
    def steps(self) -> int:
        """Scored steps, after the warm-up."""
        return self.hours * 60 // self.step_minutes

    @property
    def warmup_steps(self) -> int:
        return math.ceil(self.min_warmup_seconds / self.seconds_per_step - 1e-9)

    @property
    def warmup_seconds(self) -> float:
        return self.warmup_steps * self.seconds_per_step

    @property
    def steps_per_day(self) -> int:
        return MINUTES_PER_DAY // self.step_minutes

    @property
    def history_steps(self) -> int:
        """The recent window the models fit: the days backfilled before the replayed one.

        The CRD's default 6 h is 24 points at the demo's 15-minute steps, where
        a user at the default 1-minute step has 360; so few leave the backtest
        too few origins to hold up (in the replay of the demo's day, 24 points
        cost 9 % more replica-minutes than the reactive HPA at its overload).
        Two days, 192 points, are the most the backfill holds and the closest
        to a user's regime the demo can come.
        """
        return TRACE_DAY * self.steps_per_day

    @property
    def day_seconds(self) -> float:
        """A trace day in wall-clock seconds: the season the scaler is told about."""
        return self.steps_per_day * self.seconds_per_step

    @property
    def first_scored_step(self) -> int:
        """Where scoring starts, in steps of the bundled trace."""
        return TRACE_DAY * self.steps_per_day + self.start_hour * 60 // self.step_minutes

    @property
    def first_live_step(self) -> int:
        """Where the live replay (the warm-up) starts; the backfilled history ends there."""
        return self.first_scored_step - self.warmup_steps

    @property
    def duration_seconds(self) -> float:
        return (self.warmup_steps + self.steps) * self.seconds_per_step

    @property
    def compression(self) -> float:
        """Trace seconds per wall-clock second."""
        return self.step_minutes * 60 / self.seconds_per_step

    def _trace_cores(self) -> FloatArray:
        """The whole bundled trace in cores per step: requests summed per step, the
        replayed day peaking at peak_cores (the days before are scaled alike)."""
        trace = np.asarray(read_trace(bundled_trace_path(), BUNDLED_COLUMN).values)
        per_step = trace[: trace.size - trace.size % self.step_minutes]
        per_step = per_step.reshape(-1, self.step_minutes).sum(axis=1)
        day_start = TRACE_DAY * self.steps_per_day
        peak = per_step[day_start : day_start + self.steps_per_day].max()
        return np.asarray(per_step / peak * self.peak_cores, dtype=float)

    def load(self) -> FloatArray:
        """Cores per step of the live replay, warm-up first."""
        return self._trace_cores()[self.first_live_step : self.first_scored_step + self.steps]

    def past_load(self) -> FloatArray:
        """Cores per step of the trace before the live replay: the history to backfill."""
        return self._trace_cores()[: self.first_live_step]

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

    def compressed(self, behavior: Behavior) -> dict[str, Any]:
        """A behavior's windows and periods in replayed seconds.

        Behaviors are in real seconds, and a replayed second here is
        ``compression`` trace seconds; a window rounds up (a stabilisation
        window kept is never shorter), a period to at least 1 s (the API's floor).
        """

        body: dict[str, Any] = behavior.model_dump(by_alias=True, mode="json", exclude_none=True)
        for rules in body.values():
            rules["stabilizationWindowSeconds"] = self.compressed_seconds(
                rules["stabilizationWindowSeconds"], 0
            )
            for policy in rules["policies"]:
                policy["periodSeconds"] = self.compressed_seconds(policy["periodSeconds"], 1)
        return body

    def compressed_seconds(self, seconds: int, floor: int) -> int:
        """Real seconds in replayed ones, rounded up, at least ``floor``."""
        return max(floor, math.ceil(seconds / self.compression))

    def deployment(self, load: FloatArray, name: str = WORKLOAD) -> dict[str, Any]:
        return deployment_manifest(
            name,
            self.initial_replicas(load),
            cpu_request=f"{round(self.capacity_cores * 1000)}m",
            startup_delay=f"{self.startup_steps * self.seconds_per_step:g}s",
        )

    def scaler(self) -> dict[str, Any]:
        step = f"{self.seconds_per_step:g}s"
        return {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": KIND,
            "metadata": {"name": WORKLOAD},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": WORKLOAD},
                "minReplicas": self.min_replicas,
                "maxReplicas": self.max_replicas,
                "syncPeriod": step,
                # Sized from what a pod serves, within the default 1 % overload budget;
                # the reactive baseline keeps the HPA's 70 % target.
                "metric": {
                    "resource": "cpu",
                    "capacityPerReplica": f"{round(self.capacity_cores * 1000)}m",
                },
                "forecast": {
                    "history": f"{self.history_steps * self.seconds_per_step:g}s",
                    "step": step,
                    # The trace's own resolution: a day is 96 samples, finer adds nothing.
                    "longStep": step,
                    # The two backfilled days and the replayed one: by the end of the
                    # day the profile is still learnt on every day there is.
                    "longHistory": f"{3 * self.day_seconds:g}s",
                    # The season finder looks for 24 h and 7 d of wall-clock time;
                    # the compressed day must be named.
                    "seasonality": f"{self.day_seconds:g}s",
                    "refresh": f"{10 * self.seconds_per_step:g}s",
                },
                "scaling": {
                    "mode": "Auto",
                    "leadTime": f"{self.lead_steps * self.seconds_per_step:g}s",
                    # Its default behavior, in replayed seconds.
                    "behavior": self.compressed(PREDICTIVE_BEHAVIOR),
                },
            },
        }

    def hpa(self) -> dict[str, Any]:
        """The HPA a user would have written: CPU at the same 70 %, default behavior.

        The default behavior is stated, compressed like the scaler's, because
        an HPA without one would wait 300 real seconds (150 trace steps here)
        before scaling in.
        """
        return {
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": HPA_WORKLOAD},
            "spec": {
                "scaleTargetRef": {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "name": HPA_WORKLOAD,
                },
                "minReplicas": self.min_replicas,
                "maxReplicas": self.max_replicas,
                "metrics": [
                    {
                        "type": "Resource",
                        "resource": {
                            "name": "cpu",
                            "target": {
                                "type": "Utilization",
                                "averageUtilization": round(self.target_utilisation * 100),
                            },
                        },
                    }
                ],
                "behavior": self.compressed(DEFAULT_BEHAVIOR),
            },
        }

    def scaled_object(self, prometheus_url: str, scrape_interval_seconds: float) -> dict[str, Any]:
        """KEDA as its documentation has it for CPU from Prometheus, at the same 70 %.

        The trigger's query is the operator's own for `resource: cpu`, over the
        rate window the operator reads its recent load with (two steps, at
        least four scrapes); AverageValue is the Prometheus scaler's default,
        so KEDA's HPA asks for sum / threshold replicas, the HPA's rule at a
        70 % utilisation of one replica's request. Polling and the behavior of
        the HPA KEDA makes are KEDA's and the HPA's defaults, compressed.
        """
        window = recent_rate_window(self.seconds_per_step, scrape_interval_seconds)
        query = resource_query(
            "cpu",
            NAMESPACE,
            ScaleTargetRef(api_version="apps/v1", kind="Deployment", name=KEDA_WORKLOAD),
            window,
        )
        return {
            "apiVersion": "keda.sh/v1alpha1",
            "kind": "ScaledObject",
            "metadata": {"name": KEDA_WORKLOAD},
            "spec": {
                "scaleTargetRef": {"name": KEDA_WORKLOAD},
                "minReplicaCount": self.min_replicas,
                "maxReplicaCount": self.max_replicas,
                "pollingInterval": self.compressed_seconds(KEDA_POLLING_SECONDS, 1),
                "advanced": {
                    "horizontalPodAutoscalerConfig": {
                        "behavior": self.compressed(DEFAULT_BEHAVIOR),
                    }
                },
                "triggers": [
                    {
                        "type": "prometheus",
                        "metadata": {
                            "serverAddress": prometheus_url,
                            "query": query,
                            "threshold": f"{self.target_utilisation * self.capacity_cores:g}",
                        },
                    }
                ],
            },
        }
