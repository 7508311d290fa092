"""The operator's own configuration, from environment variables, validated at start-up.

Every variable is optional except the Prometheus URL, which the Prometheus
metric source (the default) needs; a bad value stops the operator before it
touches the cluster, with the variable named.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import (
    AnyHttpUrl,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from predictive_scaler.forecasting.refresh_job import DEFAULT_SELECTION_BUDGET_SECONDS
from predictive_scaler.operator.cpus import usable_cores
from predictive_scaler.operator.leadership import LeaseTimings
from predictive_scaler.operator.shard import selector_matcher
from predictive_scaler.rebalancing.nodes import DEFAULT_WEIGHTS, ScoringConfig
from predictive_scaler.units import parse_duration


def min_rate_window(scrape_interval: float) -> float:
    """The shortest rate() window worth querying: four scrapes, so a sample or two may miss."""
    return 4 * scrape_interval


def recent_rate_window(step_seconds: float, scrape_interval: float) -> float:
    """The window of the recent load's rate(): twice the step, so every sample sees at
    least two scrapes, and never below the shortest worth querying."""
    return max(2 * step_seconds, min_rate_window(scrape_interval))


PREFIX = "PREDICTIVE_SCALER_"
# Name of each setting's variable; PROMETHEUS_URL is shared with the local
# cluster's env file and the usual Prometheus tooling, so it has no prefix.
VARIABLES = {
    "metrics_source": f"{PREFIX}METRICS_SOURCE",
    "prometheus_url": "PROMETHEUS_URL",
    "namespaces": f"{PREFIX}NAMESPACES",
    "leader_election": f"{PREFIX}LEADER_ELECTION",
    "leader_election_namespace": f"{PREFIX}LEADER_ELECTION_NAMESPACE",
    "lease_duration": f"{PREFIX}LEASE_DURATION",
    "lease_renew_deadline": f"{PREFIX}LEASE_RENEW_DEADLINE",
    "lease_retry_period": f"{PREFIX}LEASE_RETRY_PERIOD",
    "shard_selector": f"{PREFIX}SHARD_SELECTOR",
    "bind_address": f"{PREFIX}BIND_ADDRESS",
    "metrics_port": f"{PREFIX}METRICS_PORT",
    "liveness_port": f"{PREFIX}LIVENESS_PORT",
    "scrape_interval": f"{PREFIX}SCRAPE_INTERVAL",
    "query_timeout": f"{PREFIX}QUERY_TIMEOUT",
    "query_max_samples": f"{PREFIX}QUERY_MAX_SAMPLES",
    "evaluation_workers": f"{PREFIX}EVALUATION_WORKERS",
    "selection_workers": f"{PREFIX}SELECTION_WORKERS",
    "evaluation_budget": f"{PREFIX}EVALUATION_BUDGET",
    "selection_budget": f"{PREFIX}SELECTION_BUDGET",
    "rebalance_mode": f"{PREFIX}REBALANCE_MODE",
    "rebalance_interval": f"{PREFIX}REBALANCE_INTERVAL",
    "rebalance_cooldown": f"{PREFIX}REBALANCE_COOLDOWN",
    "rebalance_settle": f"{PREFIX}REBALANCE_SETTLE",
    "rebalance_budget": f"{PREFIX}REBALANCE_BUDGET",
    "rebalance_per_node": f"{PREFIX}REBALANCE_PER_NODE",
    "rebalance_per_workload": f"{PREFIX}REBALANCE_PER_WORKLOAD",
    "rebalance_threshold": f"{PREFIX}REBALANCE_THRESHOLD",
    "rebalance_weights": f"{PREFIX}REBALANCE_WEIGHTS",
    "rebalance_nodes": f"{PREFIX}REBALANCE_NODES",
    "rebalance_lookahead": f"{PREFIX}REBALANCE_LOOKAHEAD",
    "cross_namespace_queries": f"{PREFIX}CROSS_NAMESPACE_QUERIES",
}


# How alike a set variable and a setting's name must be to read as a typo (difflib's ratio):
# past the prefix, NAMESPACE against NAMESPACES is 0.95; the local cluster's env file's
# METRICS_SERVER_PORT against METRICS_PORT is 0.77.
MISSPELT_CUTOFF = 0.85


class SettingsError(ValueError):
    """One line per bad variable, each naming it."""


class OperatorSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    # Where load and usage come from (operator.sources): Prometheus, or the
    # metrics.k8s.io API (metrics-server) for the resource: shorthand alone.
    metrics_source: Literal["prometheus", "metrics-api"] = "prometheus"
    # Needed by the Prometheus source only; checked after metrics_source.
    prometheus_url: AnyHttpUrl | None = Field(default=None, validate_default=True)
    # Empty: watch the whole cluster.
    namespaces: tuple[str, ...] = ()
    # Empty: run alone; a Lease name: of several replicas only the Lease holder acts.
    leader_election: str = ""
    leader_election_namespace: str = "default"
    lease_duration: int = Field(default=15, ge=2)
    lease_renew_deadline: int = Field(default=10, ge=2)
    lease_retry_period: int = Field(default=2, ge=1)
    # A label selector: this operator serves only the PredictiveScalers it selects.
    shard_selector: str = ""
    # In a pod, probes and scrapes come from outside; 127.0.0.1 for local runs.
    bind_address: str = "0.0.0.0"
    metrics_port: int = Field(default=8000, ge=1, le=65535)
    liveness_port: int = Field(default=8080, ge=1, le=65535)
    # Prometheus's scrape interval: a rate() window needs several samples.
    scrape_interval: float = Field(default=30.0, gt=0)
    query_timeout: float = Field(default=10.0, gt=0)
    # Samples of one series a PredictiveScaler's own query may read per range
    # query, estimated from its ranges and subqueries (operator.query_cost).
    query_max_samples: int = Field(default=10_000_000, ge=1_000)
    # Threads that evaluate objects: mostly waiting on Prometheus and the API server.
    evaluation_workers: int = Field(default=4, ge=1, le=64)
    # Processes that select and fit models; 0: one per core the CPU limit allows.
    selection_workers: int = Field(default=0, ge=0, le=64)
    # Wall time one evaluation may take once a worker has it (its queries share it).
    evaluation_budget: float = Field(default=10.0, gt=0)
    # CPU time one selection may spend scoring before it keeps the best scored so far.
    selection_budget: float = Field(default=DEFAULT_SELECTION_BUDGET_SECONDS, gt=0)
    # Rebalancing evicts only pods of workloads whose PredictiveScaler opts in.
    rebalance_mode: Literal["Off", "DryRun", "Auto"] = "Auto"
    rebalance_interval: float = Field(default=60.0, gt=0)
    # A moved pod's replacement stays put this long (no ping-pong).
    rebalance_cooldown: float = Field(default=600.0, ge=0)
    # The nodes and workload of a move wait this long, until usage shows the
    # move; 0: three rate windows (rebalance_settle_seconds).
    rebalance_settle: float = Field(default=0.0, ge=0)
    rebalance_budget: int = Field(default=5, ge=0, le=1000)
    rebalance_per_node: int = Field(default=2, ge=1)
    rebalance_per_workload: int = Field(default=1, ge=1)
    rebalance_threshold: float = Field(default=-0.1, le=0)
    rebalance_weights: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    # A label selector ("pool=batch"): only these nodes are scored and used.
    rebalance_nodes: str = ""
    # Node CPU is taken as its forecast peak this far ahead ("off" or 0: as measured).
    rebalance_lookahead: float = Field(default=300.0, ge=0)
    # False: a PromQL query may read only its object's namespace (see query_scope).
    cross_namespace_queries: bool = False

    @field_validator("prometheus_url")
    @classmethod
    def _prometheus_needed(
        cls, value: AnyHttpUrl | None, info: ValidationInfo
    ) -> AnyHttpUrl | None:
        if value is None and info.data.get("metrics_source") == "prometheus":
            raise ValueError("the Prometheus metric source needs its URL")
        return value

    @field_validator("rebalance_weights", mode="before")
    @classmethod
    def _weights(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        weights = {}
        for pair in filter(None, (p.strip() for p in value.split(","))):
            metric, separator, weight = pair.partition("=")
            if not separator:
                raise ValueError(f"want metric=weight pairs such as cpu=1,memory=0.5, got {pair!r}")
            weights[metric.strip()] = float(weight)
        if not weights or any(w < 0 for w in weights.values()) or sum(weights.values()) <= 0:
            raise ValueError("weights must be >= 0 with at least one positive")
        return weights

    @field_validator("rebalance_weights")
    @classmethod
    def _measured(cls, weights: dict[str, float]) -> dict[str, float]:
        ScoringConfig(weights=weights)  # refuses a metric the operator does not measure
        return weights

    @field_validator(
        "scrape_interval",
        "query_timeout",
        "evaluation_budget",
        "selection_budget",
        "rebalance_interval",
        "rebalance_cooldown",
        "rebalance_settle",
        "rebalance_lookahead",
        mode="before",
    )
    @classmethod
    def _duration(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().lower() == "off":
            return 0.0
        # Zero however written (0, 0s); the fields that need more than zero say so themselves.
        return parse_duration(value, allow_zero=True) if isinstance(value, str) else value

    @field_validator("selection_workers", mode="before")
    @classmethod
    def _workers(cls, value: Any) -> Any:
        # The chart fills an unset value from the container's limits.cpu (downward API).
        return 0 if isinstance(value, str) and not value.strip() else value

    @field_validator("shard_selector", "rebalance_nodes")
    @classmethod
    def _selector(cls, value: str) -> str:
        selector_matcher(value)  # raises ValueError naming the bad term
        return value

    @field_validator("namespaces", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value

    @model_validator(mode="after")
    def _lease_timings(self) -> OperatorSettings:
        # The order client-go requires: a holder must give up before others may take over.
        if not self.lease_duration > self.lease_renew_deadline > 1.2 * self.lease_retry_period:
            raise ValueError(
                f"want {PREFIX}LEASE_DURATION > {PREFIX}LEASE_RENEW_DEADLINE"
                f" > 1.2 x {PREFIX}LEASE_RETRY_PERIOD"
            )
        return self

    @model_validator(mode="after")
    def _ports_apart(self) -> OperatorSettings:
        if self.metrics_port == self.liveness_port:
            raise ValueError(
                f"{PREFIX}METRICS_PORT and {PREFIX}LIVENESS_PORT are both {self.metrics_port}: "
                "the two endpoints need a port each"
            )
        return self

    @property
    def lease_timings(self) -> LeaseTimings:
        return LeaseTimings(self.lease_duration, self.lease_renew_deadline, self.lease_retry_period)

    @property
    def selection_processes(self) -> int:
        return self.selection_workers or usable_cores()

    @property
    def min_rate_window(self) -> float:
        return min_rate_window(self.scrape_interval)

    @property
    def rebalance_settle_seconds(self) -> float:
        """Until a node's rate() has spanned its replacement's start: three rate windows."""
        return self.rebalance_settle or 3 * self.min_rate_window

    @property
    def prometheus(self) -> str:
        """Prometheus's base URL; only the Prometheus source asks for it."""
        if self.prometheus_url is None:
            raise ValueError("PROMETHEUS_URL is not set")
        return str(self.prometheus_url).rstrip("/")

    @classmethod
    def from_environment(cls, environ: Mapping[str, str]) -> OperatorSettings:
        values = {field: environ[name] for field, name in VARIABLES.items() if name in environ}
        try:
            return cls.model_validate(values)
        except ValidationError as error:
            lines = []
            for problem in error.errors():
                if not problem["loc"]:  # a rule across variables names them itself
                    lines.append(f"{PREFIX}*: {problem['msg']}")
                    continue
                field = str(problem["loc"][0])
                variable = VARIABLES.get(field, field)
                given = environ.get(variable)
                shown = "is not set" if given is None else f"got {given!r}"
                lines.append(f"{variable}: {problem['msg']} ({shown})")
            raise SettingsError("\n".join(lines)) from None


def misspelt_variables(environ: Mapping[str, str]) -> list[str]:
    """Words for each set variable that is not a setting but nearly spells one.

    Unknown variables are not refused: the local cluster's env file and the
    dev tools share the prefix. A near miss is worth a warning, though: an
    unread PREDICTIVE_SCALER_NAMESPACE would quietly watch the whole cluster.
    """
    # Compared without the prefix they share, which would make any two look alike
    # (PROMETHEUS_URL has none: PREDICTIVE_SCALER_PROMETHEUS_URL is a near miss of it).
    known = {name.removeprefix(PREFIX): name for name in VARIABLES.values()}
    words = []
    for name in sorted(environ):
        if name.startswith(PREFIX) and name not in VARIABLES.values():
            close = difflib.get_close_matches(
                name.removeprefix(PREFIX), list(known), n=1, cutoff=MISSPELT_CUTOFF
            )
            if close:
                words.append(
                    f"{name} is not a setting and is ignored: did you mean {known[close[0]]}?"
                )
    return words
