"""The operator-load benchmark's objects: its classes of PredictiveScalers and the run's options."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from predictive_scaler.operator.resource import GROUP, VERSION, ForecastSettings
from predictive_scaler.units import parse_duration
from predictive_scaler_dev.localcluster.kube import (
    NodeShape,
)

NAMESPACE = "ps-load"
NOISY_NAMESPACE = "ps-load-noisy"
SCRAPE_TARGET = "predictive-scaler-operator-load"
# Our nodes carry this label, so the leftovers of an interrupted run are found too.
NODE_LABEL = "predictive-scaler.io/benchmark=operator-load"
NODE_SHAPE = NodeShape(labels=dict([NODE_LABEL.split("=")]))
CREATORS = 8
POLL_SECONDS = 2.0
OPERATOR_SCRAPE_SECONDS = 30.0  # the chart's metrics.serviceMonitor.interval
POD_USAGE = "200m"  # under targetPerReplica: replicas stay at 1, only evaluating is measured
# The run before auto was the default: holt on a short live history.
HOLT_FORECAST = {"models": ["holt"], "history": "10m", "step": "30s", "refresh": "10m"}
# The expensive objects: auto on 2,160 points, evaluated every 2 s (the CRD's floor).
EXPENSIVE_HISTORY, EXPENSIVE_STEP, EXPENSIVE_SYNC = "3h", "5s", "2s"
# The CRD's floor of refresh: 10 s plus 2.5 ms per history point (history / step),
# written there as 400 x refresh >= 4000 + points, in whole seconds.
REFRESH_FLOOR_PER_SECOND, REFRESH_FLOOR_BASE = 400, 4000
# Seconds a first evaluation may take per object before the run measures anyway:
# a fresh auto selection costs about a second of CPU (BENCHMARKS.md, Forecasting).
FIRST_EVALUATION_ALLOWANCE = {"auto": 2.0, "fixed": 0.5}


def shortest_refresh(history: str, step: str) -> str:
    """The shortest refresh the CRD accepts for ``history`` at ``step``, whole seconds up."""
    points = int(parse_duration(history) // parse_duration(step))
    return f"{-(-(REFRESH_FLOOR_BASE + points) // REFRESH_FLOOR_PER_SECOND)}s"


@dataclass(frozen=True)
class LoadClass:
    """One kind of object: where they live, how often they are evaluated, how they forecast."""

    kind: str  # "cheap" | "expensive"
    namespace: str
    prefix: str  # of their Deployments' names, and so of their pods'
    sync_period: str
    forecast: Mapping[str, Any] | None  # spec.forecast; None leaves the CRD's defaults

    @property
    def settings(self) -> ForecastSettings:
        """The forecast settings the operator will read, defaults filled in."""
        return ForecastSettings.model_validate(dict(self.forecast or {}))

    @property
    def sync_seconds(self) -> float:
        return parse_duration(self.sync_period)

    @property
    def selects(self) -> bool:
        return "auto" in self.settings.models

    def names(self, count: int) -> list[str]:
        return [f"{self.prefix}{index:04d}" for index in range(count)]

    def scaler(self, name: str) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
            "minReplicas": 1,
            "maxReplicas": 3,
            "syncPeriod": self.sync_period,
            "metric": {"resource": "cpu", "targetPerReplica": "500m"},
            "scaling": {"mode": "Auto", "leadTime": "60s"},
        }
        if self.forecast is not None:
            spec["forecast"] = dict(self.forecast)
        return {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "PredictiveScaler",
            "metadata": {"name": name, "namespace": self.namespace},
            "spec": spec,
        }

    def describe(self) -> str:
        settings = self.settings
        models = ", ".join(settings.models)
        return (
            f"{models} on {settings.history} at {settings.step} steps, refresh "
            f"{settings.refresh}, syncPeriod {self.sync_period}"
        )


def cheap_class(model: str, sync_period: str) -> LoadClass:
    """auto with every forecast setting at the CRD's default (what a new user gets),
    or holt as the runs before auto was the default."""
    forecast = None if model == "auto" else HOLT_FORECAST
    return LoadClass("cheap", NAMESPACE, "w-", sync_period, forecast)


def expensive_class() -> LoadClass:
    refresh = shortest_refresh(EXPENSIVE_HISTORY, EXPENSIVE_STEP)
    forecast = {
        "models": ["auto"],
        "history": EXPENSIVE_HISTORY,
        "step": EXPENSIVE_STEP,
        "refresh": refresh,
    }
    return LoadClass("expensive", NOISY_NAMESPACE, "x-", EXPENSIVE_SYNC, forecast)


def split(count: int, mix: float) -> tuple[int, int]:
    """(cheap, expensive) objects of ``count``: the expensive share rounded half up."""
    expensive = min(count, math.floor(count * mix + 0.5))
    return count - expensive, expensive


@dataclass(frozen=True)
class Options:
    classes: tuple[LoadClass, ...]  # the cheap one, then the expensive one
    mixes: tuple[float, ...]  # each count runs at each of these expensive shares
    cycles: int
    workers: int
    selection_workers: int
    past: str
    logs: Path

    @staticmethod
    def counts(count: int, mix: float) -> dict[str, int]:
        cheap, expensive = split(count, mix)
        return {"cheap": cheap, "expensive": expensive}

    def largest(self, counts: Sequence[int]) -> dict[str, int]:
        """The most objects of each class any run needs: the Deployments to make."""
        runs = [self.counts(count, mix) for count in counts for mix in self.mixes]
        return {c.kind: max(run[c.kind] for run in runs) for c in self.classes}

    @property
    def window_seconds(self) -> float:
        return self.cycles * self.classes[0].sync_seconds
