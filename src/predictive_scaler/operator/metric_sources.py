"""The metric source an operator runs, as its settings choose (``..._METRICS_SOURCE``)."""

from __future__ import annotations

from kubernetes import client

from predictive_scaler.operator.metrics_api import MetricsApiSource
from predictive_scaler.operator.prometheus import PrometheusSource
from predictive_scaler.operator.settings import OperatorSettings
from predictive_scaler.operator.sources import MetricSource


def metric_source(settings: OperatorSettings, api: client.ApiClient) -> MetricSource:
    if settings.metrics_source == "metrics-api":
        return MetricsApiSource(api, settings.query_timeout)
    return PrometheusSource(
        settings.prometheus,
        settings.query_timeout,
        settings.min_rate_window,
        scrape_interval=settings.scrape_interval,
        max_samples=settings.query_max_samples,
    )
