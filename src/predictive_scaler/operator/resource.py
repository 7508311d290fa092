"""The PredictiveScaler custom resource as Python values, parsed once at the boundary.

The CRD (the package's `data/crds/`, which `crds/` and the chart link to) is
the API's source of truth and the API server applies its defaults and
validation; these models mirror it so the operator never passes
raw dicts around, and they re-check what the API server cannot (a spec written
before a schema change, or an object applied with validation off).
"""

from __future__ import annotations

from decimal import Decimal
from enum import StrEnum
from typing import Any, Literal

from kubernetes.utils import parse_quantity
from pydantic import Field, ValidationInfo, field_validator, model_validator
from pydantic.alias_generators import to_camel

from predictive_scaler.forecasting import MODEL_NAMES
from predictive_scaler.scaling import ScalingSpec
from predictive_scaler.scaling.behavior import ApiModel, Behavior
from predictive_scaler.scaling.spec import (
    DEFAULT_OVERLOAD_BUDGET,
    MAX_OVERLOAD_BUDGET,
    lead_steps,
)
from predictive_scaler.simulation.fallback import Fallback
from predictive_scaler.simulation.shadow import ShadowSpec
from predictive_scaler.units import format_duration, parse_duration, percentage

GROUP = "autoscaling.predictive-scaler.io"
VERSION = "v1alpha1"
PLURAL = "predictivescalers"
KIND = "PredictiveScaler"


class Mode(StrEnum):
    AUTO = "Auto"
    DRY_RUN = "DryRun"


# The CRD's patterns: group/version (or a core version alone), and a CamelCase kind.
API_VERSION_PATTERN = r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?v[0-9]+((alpha|beta)[0-9]+)?$"
KIND_PATTERN = r"^[A-Z][A-Za-z0-9]*$"


class ScaleTargetRef(ApiModel):
    """Any kind with a scale subresource, as the HPA's scaleTargetRef (apps/v1 the usual)."""

    api_version: str = Field(pattern=API_VERSION_PATTERN, max_length=253)
    kind: str = Field(pattern=KIND_PATTERN, max_length=63)
    name: str = Field(min_length=1, max_length=253)

    def describe(self) -> str:
        return f"{self.kind}/{self.name}"


class MetricSpec(ApiModel):
    resource: Literal["cpu", "memory"] | None = None
    query: str | None = Field(default=None, min_length=1, max_length=4096)
    target_per_replica: str | None = None
    capacity_per_replica: str | None = None

    @field_validator("target_per_replica", "capacity_per_replica")
    @classmethod
    def _positive_quantity(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None and quantity(value) <= 0:
            raise ValueError(f"{to_camel(info.field_name or '')} must be positive, got {value!r}")
        return value

    @model_validator(mode="after")
    def _one_sizing(self) -> MetricSpec:
        # The CRD refuses both and neither; re-checked for objects stored before it did.
        if (self.resource is None) == (self.query is None):
            raise ValueError("set exactly one of metric.resource and metric.query")
        if (self.target_per_replica is None) == (self.capacity_per_replica is None):
            raise ValueError(
                "set exactly one of metric.targetPerReplica and metric.capacityPerReplica"
            )
        return self

    def target_value(self) -> float | None:
        return None if self.target_per_replica is None else quantity(self.target_per_replica)

    def capacity_value(self) -> float | None:
        return None if self.capacity_per_replica is None else quantity(self.capacity_per_replica)


# A Kubernetes quantity holds no more than 2^63 - 1 and no finer than a nano: the API server
# caps larger values and rounds finer positive ones up to 1n (resource.Quantity), so a
# quantity it accepted, such as 1e400 or 1e-400, is read here as the number it stores
# instead of as inf or 0.
QUANTITY_MAX = Decimal(2**63 - 1)
QUANTITY_MIN_POSITIVE = Decimal("1e-9")


def quantity(text: str) -> float:
    """A Kubernetes quantity ("500m", "2", "512Mi") as a number; ValueError when malformed."""
    value: Decimal = parse_quantity(text)  # type: ignore[no-untyped-call]
    if not value.is_finite():
        raise ValueError(f"want a quantity such as 500m, 2 or 512Mi, got {text!r}")
    magnitude = min(max(abs(value), QUANTITY_MIN_POSITIVE), QUANTITY_MAX) if value else value
    return float(magnitude.copy_sign(value))


def _duration(value: str | None) -> str | None:
    if value is not None:
        parse_duration(value)
    return value


# The longest windows and steps the operator reads: Prometheus keeps 15 days by
# default, a season is at most a week, and a step beyond an hour (or a long
# step beyond a day) no longer describes load an autoscaler can follow. Beyond
# these a window's start would not even be a date (999999d is 2,700 years).
LONGEST = {
    "history": 90 * 86_400.0,
    "step": 3_600.0,
    "longHistory": 400 * 86_400.0,
    "longStep": 86_400.0,
}
# Prometheus answers a range query with at most 11,000 points per series; a
# longer window would be refused, and would cost memory in every evaluation.
MAX_HISTORY_POINTS = 11_000
# The long history is read in as many range queries as that limit needs, but
# only once: later cycles query only its new samples. Four queries at most.
MAX_LONG_HISTORY_POINTS = 4 * MAX_HISTORY_POINTS
# The floor of syncPeriod the operator documents: an evaluation costs two
# Prometheus queries and two API requests, and samples come no faster than scrapes.
MIN_SYNC_SECONDS = 2.0
# And its ceiling: an autoscaler that looks less than hourly reacts to nothing,
# and a source that records load between turns (metrics.k8s.io) must know how
# long an object may leave its record unread before it counts as gone.
MAX_SYNC_SECONDS = 3600.0
# A selection costs about 1 s of CPU plus 0.25 ms per history point (auto with
# seasons; 3.6 s at 10,800 points); a refresh must leave ten times that.
REFRESH_BASE_SECONDS = 10.0
REFRESH_SECONDS_PER_POINT = 0.0025


class ForecastSettings(ApiModel):
    models: tuple[str, ...] = ("auto",)
    history: str = "6h"
    step: str = "1m"
    # The seasons (a day, a week) are found in a long, coarse history. 15 days
    # hold two weeks with a day to spare for gaps, as Crane's default does; at
    # 5 minutes a day is 288 samples, fine enough for a profile of the day and
    # 4,321 points in all (one range query, a few tens of KB per object).
    long_history: str = "15d"
    long_step: str = "5m"
    seasonality: str | None = None
    interval: float = Field(default=0.9, ge=0.5, le=0.99)
    refresh: str = "1h"

    _durations = field_validator(
        "history", "step", "long_history", "long_step", "seasonality", "refresh"
    )(_duration)

    @field_validator("models")
    @classmethod
    def _known(cls, models: tuple[str, ...]) -> tuple[str, ...]:
        # The CRD's enum says the same; an object applied without validation
        # must still fail here, not when its forecaster is built.
        unknown = [name for name in models if name not in MODEL_NAMES]
        if not models or unknown:
            raise ValueError(
                f"spec.forecast.models: unknown {', '.join(map(repr, unknown)) or 'empty list'}; "
                f"known: {', '.join(MODEL_NAMES)}"
            )
        return models

    @model_validator(mode="after")
    def _bounded(self) -> ForecastSettings:
        for name, value in (
            ("history", self.history),
            ("step", self.step),
            ("longHistory", self.long_history),
            ("longStep", self.long_step),
        ):
            longest = LONGEST[name]
            if parse_duration(value) > longest:
                raise ValueError(
                    f"spec.forecast.{name}: {value} is longer than {format_duration(longest)}, "
                    f"the most the operator reads"
                )
        if self.history_points > MAX_HISTORY_POINTS:
            raise ValueError(
                f"spec.forecast.history: {self.history} at step {self.step} is "
                f"{self.history_points:,} points; Prometheus answers at most "
                f"{MAX_HISTORY_POINTS:,} per series (raise step or shorten history)"
            )
        if self.long_history_points > MAX_LONG_HISTORY_POINTS:
            raise ValueError(
                f"spec.forecast.longHistory: {self.long_history} at longStep {self.long_step} "
                f"is {self.long_history_points:,} points; at most {MAX_LONG_HISTORY_POINTS:,} "
                "(raise longStep or shorten longHistory)"
            )
        if self.long_step_seconds < self.step_seconds:
            raise ValueError(
                f"spec.forecast.longStep: {self.long_step} is finer than step {self.step}"
            )
        if parse_duration(self.long_history) < parse_duration(self.history):
            raise ValueError(
                f"spec.forecast.longHistory: {self.long_history} is shorter than "
                f"history {self.history}"
            )
        # history / step as the CRD's rule counts it (whole division, no +1).
        points = int(parse_duration(self.history) // self.step_seconds)
        shortest = REFRESH_BASE_SECONDS + REFRESH_SECONDS_PER_POINT * points
        if parse_duration(self.refresh) < shortest:
            raise ValueError(
                f"spec.forecast.refresh: {self.refresh} is shorter than {shortest:g}s, ten times "
                f"what a model selection over {points:,} points costs"
                " (10s plus 2.5ms per point)"
            )
        season = self.seasonality_seconds
        if season is not None and 2 * season > parse_duration(self.long_history):
            raise ValueError(
                f"spec.forecast.seasonality: two seasons of {self.seasonality} do not fit in "
                f"longHistory {self.long_history}, so the season could never be learnt"
            )
        return self

    @property
    def step_seconds(self) -> float:
        return parse_duration(self.step)

    @property
    def history_points(self) -> int:
        return int(parse_duration(self.history) // self.step_seconds) + 1

    @property
    def long_step_seconds(self) -> float:
        return parse_duration(self.long_step)

    @property
    def long_history_points(self) -> int:
        return int(parse_duration(self.long_history) // self.long_step_seconds) + 1

    @property
    def seasonality_seconds(self) -> float | None:
        return None if self.seasonality is None else parse_duration(self.seasonality)

    @property
    def season_length(self) -> int | None:
        if self.seasonality is None:
            return None
        steps = round(parse_duration(self.seasonality) / self.step_seconds)
        return steps if steps >= 2 else None


class ScalingSettings(ApiModel):
    mode: Mode = Mode.AUTO
    lead_time: str = "2m"
    overload_budget: str | None = None
    # None: the predictive default (scaling.PREDICTIVE_BEHAVIOR), not the HPA's.
    behavior: Behavior | None = None

    @field_validator("overload_budget")
    @classmethod
    def _budget(cls, value: str | None) -> str | None:
        if value is not None:
            share = percentage(value)
            if not 0.0 < share <= MAX_OVERLOAD_BUDGET:
                raise ValueError(f"overloadBudget must lie in (0%, 50%], got {value!r}")
        return value

    @property
    def overload_budget_share(self) -> float:
        return (
            DEFAULT_OVERLOAD_BUDGET
            if self.overload_budget is None
            else percentage(self.overload_budget)
        )

    @field_validator("lead_time")
    @classmethod
    def _lead_time(cls, value: str) -> str:
        # Zero is allowed here (pods that serve at once), written as the CRD lets it be: 0s, 00m.
        parse_duration(value, allow_zero=True)
        return value

    @property
    def lead_time_seconds(self) -> float:
        return parse_duration(self.lead_time, allow_zero=True)


class ComparisonSettings(ApiModel):
    """The shadow HPA the object is compared with (status.comparison)."""

    # About what users' HPAs target, and what the benchmarks' baseline runs at.
    hpa_target_utilization: str = "70%"
    when_worse_than_reactive: Fallback = Fallback.WARN

    @field_validator("hpa_target_utilization")
    @classmethod
    def _utilization(cls, value: str) -> str:
        share = percentage(value)
        if not 0.0 < share <= 1.0:
            raise ValueError(f"hpaTargetUtilization must lie in (0%, 100%], got {value!r}")
        return value

    @property
    def utilization(self) -> float:
        return percentage(self.hpa_target_utilization)


class RebalanceSettings(ApiModel):
    enabled: bool = False


class PredictiveScalerSpec(ApiModel):
    scale_target_ref: ScaleTargetRef
    min_replicas: int = Field(default=1, ge=1)
    max_replicas: int = Field(ge=1)
    sync_period: str = "30s"
    metric: MetricSpec
    forecast: ForecastSettings = ForecastSettings()
    scaling: ScalingSettings = ScalingSettings()
    comparison: ComparisonSettings = ComparisonSettings()
    rebalance: RebalanceSettings = RebalanceSettings()

    @field_validator("sync_period")
    @classmethod
    def _sync(cls, value: str) -> str:
        seconds = parse_duration(value)
        if seconds < MIN_SYNC_SECONDS:
            floor = f"{MIN_SYNC_SECONDS:g}s"
            raise ValueError(f"spec.syncPeriod: {value} is below the floor of {floor}")
        if seconds > MAX_SYNC_SECONDS:
            ceiling = format_duration(MAX_SYNC_SECONDS)
            raise ValueError(f"spec.syncPeriod: {value} is above the ceiling of {ceiling}")
        return value

    @model_validator(mode="after")
    def _lead_within_history(self) -> PredictiveScalerSpec:
        # Forecasting further ahead than the history reaches back is guesswork,
        # and a horizon of millions of steps would be a memory bomb.
        if self.scaling.lead_time_seconds > parse_duration(self.forecast.history):
            raise ValueError(
                f"spec.scaling.leadTime: {self.scaling.lead_time} reaches further ahead than "
                f"spec.forecast.history ({self.forecast.history}) looks back"
            )
        return self

    @model_validator(mode="after")
    def _budget_needs_capacity(self) -> PredictiveScalerSpec:
        if self.scaling.overload_budget is not None and self.metric.capacity_per_replica is None:
            raise ValueError(
                "spec.scaling.overloadBudget needs metric.capacityPerReplica "
                "(the load at which one replica is saturated)"
            )
        return self

    @property
    def sync_seconds(self) -> float:
        return parse_duration(self.sync_period)

    def scaling_spec(self) -> ScalingSpec:
        """The pure policy's view of this spec (raises ValueError if min > max)."""
        return ScalingSpec(
            min_replicas=self.min_replicas,
            max_replicas=self.max_replicas,
            target_per_replica=self.metric.target_value(),
            capacity_per_replica=self.metric.capacity_value(),
            overload_budget=self.scaling.overload_budget_share,
            lead_time_seconds=self.scaling.lead_time_seconds,
            interval=self.forecast.interval,
            behavior=self.scaling.behavior,
        )

    def shadow_spec(self) -> ShadowSpec:
        """The HPA this object is compared with: its target, lead time, limits and behavior."""
        utilization = self.comparison.utilization
        capacity = self.metric.capacity_value()
        if capacity is None:
            target = self.metric.target_value()
            assert target is not None  # the metric's validator requires one of them
            capacity = target / utilization
        step = self.forecast.step_seconds
        return ShadowSpec(
            capacity=capacity,
            target=capacity * utilization,
            step_seconds=step,
            startup_steps=lead_steps(self.scaling.lead_time_seconds, step),
            min_replicas=self.min_replicas,
            max_replicas=self.max_replicas,
            # No behavior: the HPA a user who sets none runs, the controller's legacy path.
            behavior=self.scaling.behavior,
            # A load per replica is an AverageValue target; a capacity, a Utilization one.
            average_value=self.metric.capacity_value() is None,
        )

    @classmethod
    def from_body(cls, spec: Any) -> PredictiveScalerSpec:
        return cls.model_validate(dict(spec))
