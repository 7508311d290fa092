"""Days of history backfilled into Prometheus: the operator finds the daily season and uses it.

Each workload's past CPU is written into the local Prometheus with promtool
(as a pod that has since gone), its present CPU is driven through kwok, and
both follow the same daily curve. One workload has three days of past, the
other five and a half hours: the first forecasts with its daily season, the second says
how much history it lacks. Both read their long history once, then only its
new samples.
"""

from __future__ import annotations

import datetime
import re
import time
from collections.abc import Callable
from contextlib import ExitStack

import numpy as np
from kubernetes import client

import predictive_scaler_dev.localcluster as local
from predictive_scaler.operator.resource import GROUP, PLURAL, VERSION
from predictive_scaler_dev.demo.load import LoadDriver
from predictive_scaler_dev.demo.process import OperatorProcess
from predictive_scaler_dev.localcluster.prometheus import BackfillSeries, backfill, query_until
from tests.fixtures.cluster import create_deployment, wait_for
from tests.fixtures.operator import (
    condition,
    events_for,
    kubectl,
    read_status,
    samples,
    scaler,
    wait_condition,
)

DAY = 86_400.0
BASE, SWING = 1.0, 0.6  # cores: the daily curve's mean and amplitude
# A daily surge (a batch job, the morning logins): 3-minute ramps around 20 minutes at
# SURGE more cores, the latest one ending half an hour before the test, so the recent
# window holds one that only the daily season could have foreseen.
SURGE, RAMP, SURGE_LENGTH = 1.0, 180.0, 26 * 60.0
SURGE_ENDED = 30 * 60.0
SAMPLE_EVERY = 60.0
# Prometheus loads new blocks from its data directory once a minute; allow a few.
BLOCKS_LOADED_WITHIN = 240.0
# A selection with its seasonal pathway, on a busy machine, plus a few sync periods.
SELECTED_WITHIN = 180.0
LONG_POINTS = 15 * 288 + 1  # the default longHistory (15d) at longStep 5m


Curve = Callable[[np.ndarray], np.ndarray]  # epoch seconds -> cores


def daily_cores(surge_start: float) -> Curve:
    def cores(epoch: np.ndarray) -> np.ndarray:
        into_surge = np.mod(epoch - surge_start, DAY)
        surge = np.clip(np.minimum(into_surge, SURGE_LENGTH - into_surge) / RAMP, 0.0, 1.0)
        return np.asarray(BASE + SWING * np.sin(2 * np.pi * epoch / DAY) + SURGE * surge)

    return cores


def past_cpu(
    namespace: str,
    deployment: str,
    cores: Callable[[np.ndarray], np.ndarray],
    start: float,
    end: float,
) -> BackfillSeries:
    """The CPU counter of a pod of `deployment` that ran `cores` from `start` to `end`."""
    fine = np.arange(start, end, 5.0)
    counter = np.concatenate([[0.0], np.cumsum(cores(fine[:-1]) * 5.0)])
    every = int(SAMPLE_EVERY / 5.0)
    return BackfillSeries(
        "container_cpu_usage_seconds_total",
        {"namespace": namespace, "pod": f"{deployment}-5d8f7b9c4-past1", "container": "app"},
        list(zip(fine[::every].tolist(), counter[::every].tolist(), strict=True)),
        kind="counter",
    )


def test_a_backfilled_daily_season_is_found_used_and_its_absence_explained(
    operator: OperatorProcess,
    local_cluster: local.LocalCluster,
    core_v1: client.CoreV1Api,
    apps_v1: client.AppsV1Api,
    custom_objects: client.CustomObjectsApi,
    namespace: str,
) -> None:
    now = time.time()
    cores = daily_cores(surge_start=now - SURGE_ENDED - SURGE_LENGTH)
    # Five and a half hours: what there is rounds down, and five exactly, read from
    # the first sample, is a long step short of five when the selection runs at once.
    past = {"learnt": 3 * DAY, "cold": 5.5 * 3600.0}
    # The past pods stop a minute before the present ones start, as after a rollout.
    series = [past_cpu(namespace, name, cores, now - s, now - 60.0) for name, s in past.items()]
    backfill(local_cluster, series)
    with ExitStack() as stack:
        for name in past:
            create_deployment(apps_v1, namespace, name, 2, cpu_request="1")
            stack.enter_context(
                LoadDriver(
                    core_v1, apps_v1, namespace, name, lambda s: float(cores(np.array(now + s)))
                )
            )
        query_until(
            local_cluster.prometheus_url,
            f'count_over_time(container_cpu_usage_seconds_total{{namespace="{namespace}",'
            f'pod="learnt-5d8f7b9c4-past1"}}[4d])',
            lambda found: bool(found) and found[0].value > 0.9 * 3 * DAY / SAMPLE_EVERY,
            timeout=BLOCKS_LOADED_WITHIN,
        )
        for name in past:
            body = scaler(
                name,
                name,
                metric={"resource": "cpu", "targetPerReplica": "500m"},
                mode="DryRun",
                syncPeriod="5s",
            )
            body["spec"]["forecast"] = {"history": "2h", "step": "1m", "models": ["naive", "holt"]}
            body["spec"]["scaling"]["leadTime"] = "2m"
            custom_objects.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, body)

        # Three days: the daily season is found in the long history and shapes the forecast.
        def seasons_of(name: str) -> dict[str, object]:
            found: dict[str, object] = (
                read_status(custom_objects, namespace, name).get("forecast", {}).get("seasons", {})
            )
            return found

        wait_for(
            lambda: seasons_of("learnt").get("found") == ["24h"],
            timeout=SELECTED_WITHIN,
            what="the daily season found in three days of backfilled history",
        )
        learnt = read_status(custom_objects, namespace, "learnt")
        assert "+season" in learnt["forecast"]["model"], learnt["forecast"]
        assert learnt["forecast"]["seasons"]["inUse"] is True
        reliable = condition(learnt, "ForecastReliable")
        assert reliable["status"] == "True", reliable
        assert "daily season in use" in reliable["message"]

        # Five hours: not yet, and it says how much is there and how much is needed.
        cold = wait_condition(
            custom_objects,
            namespace,
            "cold",
            "ForecastReliable",
            "False",
            "LearningSeasons",
            timeout=SELECTED_WITHIN,
        )
        amount = re.search(
            r"(\d+) h of the 2 days needed to learn the daily season", cold["message"]
        )
        assert amount is not None, cold["message"]
        assert 5 <= int(amount.group(1)) <= 6, cold["message"]
        cold_status = read_status(custom_objects, namespace, "cold")
        assert cold_status["forecast"]["seasons"]["waitingFor"] == "24h"
        assert condition(cold_status, "Ready")["status"] == "True"  # it forecasts with what it has
        # kopf posts an evaluation's Events after its status is written, from a queue.
        wait_for(
            lambda: "LearningSeasons" in {e.reason for e in events_for(core_v1, namespace, "cold")},
            what="the LearningSeasons Event",
        )
        described = kubectl(local_cluster, "describe", "psc", "cold", "-n", namespace)
        assert "of the 2 days needed to learn the daily season" in described

        # Cached: after both first reads, later cycles ask only for new samples.
        def long_points_read() -> float:
            return samples(operator, "predictive_scaler_history_points_read_total")[
                (("window", "long"),)
            ]

        after_first_reads = long_points_read()
        assert after_first_reads >= 2 * LONG_POINTS
        first = read_status(custom_objects, namespace, "learnt")["lastEvaluationTime"]
        later = (datetime.datetime.fromisoformat(first) + datetime.timedelta(seconds=12)).strftime(
            "%Y-%m-%dT%H:%M:%SZ"
        )
        wait_for(
            lambda: read_status(custom_objects, namespace, "learnt")["lastEvaluationTime"] >= later,
            timeout=90,
            what="two more evaluations",
        )
        assert long_points_read() - after_first_reads < LONG_POINTS
