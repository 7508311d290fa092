"""The history the demo backfills, and the forecast settings that read it, without a cluster."""

from __future__ import annotations

import re

import numpy as np
import pytest

from predictive_scaler.operator.prometheus import POD_NAME_PATTERNS
from predictive_scaler.operator.resource import PredictiveScalerSpec
from predictive_scaler.units import parse_duration
from predictive_scaler_dev.demo.history import (
    IDLE_TAIL_SECONDS,
    backfill_pod,
    core_seconds,
    loaded_query,
    past_cpu,
    samples_until,
)
from predictive_scaler_dev.demo.scenario import NAMESPACE, WORKLOAD, Scenario

SCENARIO = Scenario()
ENDS_AT = 1_700_000_000.0  # any epoch: the driver's start


def test_the_past_is_the_bundled_trace_up_to_the_live_replay_scaled_alike() -> None:
    past, live = SCENARIO.past_load(), SCENARIO.load()
    # 1 and 2 July, less the warm-up that is replayed live.
    assert past.size == 2 * 96 - SCENARIO.warmup_steps
    whole = Scenario(min_warmup_seconds=2 * 96 * 2.0)  # the two days all live instead
    assert np.array_equal(np.concatenate([past, live]), np.concatenate([whole.load()]))
    # A Sunday and a Saturday, scaled to the Monday's peak: quieter, but far from idle.
    assert 0.1 * SCENARIO.peak_cores < past.max() < SCENARIO.peak_cores


def test_a_later_start_backfills_the_morning_of_the_replayed_day_too() -> None:
    morning = Scenario(start_hour=7, hours=6)
    assert morning.past_load().size == 2 * 96 + 7 * 4 - morning.warmup_steps
    assert np.array_equal(morning.past_load()[: SCENARIO.past_load().size], SCENARIO.past_load())


def test_the_counter_ends_where_the_live_replay_begins_and_then_idles() -> None:
    series = past_cpu(SCENARIO, ends_at=ENDS_AT, sample_seconds=2.0)
    times = np.array([t for t, _ in series.samples])
    counter = np.array([v for _, v in series.samples])
    assert np.allclose(np.diff(times), 2.0)
    assert ENDS_AT in times
    span = SCENARIO.past_load().size * SCENARIO.seconds_per_step
    assert times[0] == pytest.approx(ENDS_AT - span)
    assert times[-1] >= ENDS_AT + IDLE_TAIL_SECONDS
    assert counter[0] == 0.0
    assert np.all(np.diff(counter) >= 0.0)  # a counter: never a reset
    assert np.all(counter[times >= ENDS_AT] == counter[times == ENDS_AT])  # idle after
    assert samples_until(series, ENDS_AT) == int(np.sum(times <= ENDS_AT))


@pytest.mark.parametrize("sample_seconds", [2.0, 1.0, 0.5])
def test_the_counter_rises_at_the_trace_load_of_each_step(sample_seconds: float) -> None:
    series = past_cpu(SCENARIO, ends_at=ENDS_AT, sample_seconds=sample_seconds)
    times = np.array([t for t, _ in series.samples])
    counter = np.array([v for _, v in series.samples])
    busy = times <= ENDS_AT
    rates = np.diff(counter[busy]) / np.diff(times[busy])
    per_step = round(SCENARIO.seconds_per_step / sample_seconds)
    expected = np.repeat(SCENARIO.past_load(), per_step)
    # The live pods' counters take over half a scrape before the driver starts.
    assert np.allclose(rates[:-1], expected[:-1])
    assert rates[-1] == pytest.approx(expected[-1] / 2)
    assert counter[-1] == pytest.approx(
        np.sum(SCENARIO.past_load()) * SCENARIO.seconds_per_step
        - SCENARIO.past_load()[-1] * sample_seconds / 2
    )


def test_the_core_seconds_of_a_step_function_hold_between_and_after_steps() -> None:
    load = np.array([1.0, 3.0])
    elapsed = np.array([-1.0, 0.0, 1.0, 2.0, 3.0, 4.0, 9.0])
    assert np.allclose(core_seconds(load, 2.0, elapsed), [0, 0, 1, 2, 5, 8, 8])


def test_the_past_pod_is_read_by_the_scalers_cpu_query_and_no_live_pod_is_named_so() -> None:
    series = past_cpu(SCENARIO, ends_at=ENDS_AT, sample_seconds=2.0)
    assert series.name == "container_cpu_usage_seconds_total"
    assert series.kind == "counter"
    labels = series.labels
    assert labels["namespace"] == NAMESPACE
    assert labels["container"] != ""  # the query leaves out cAdvisor's pod-level series
    pattern = POD_NAME_PATTERNS["Deployment"].format(name=WORKLOAD)
    assert re.fullmatch(pattern, labels["pod"])
    # A pod-template hash is drawn from consonants and digits only.
    assert re.search(r"[aeiou]", labels["pod"].split("-")[1])
    assert backfill_pod(ENDS_AT) != backfill_pod(ENDS_AT + 300)  # another run, another series


def test_prometheus_is_asked_for_the_samples_up_to_the_hand_over() -> None:
    series = past_cpu(SCENARIO, ends_at=ENDS_AT, sample_seconds=2.0)
    query = loaded_query(series, ENDS_AT)
    assert query.startswith("count_over_time(container_cpu_usage_seconds_total{")
    assert f'pod="{series.labels["pod"]}"' in query
    assert query.endswith(f" @ {ENDS_AT:.3f})")
    window = int(re.search(r"\[(\d+)s\]", query).group(1))  # type: ignore[union-attr]
    assert window > ENDS_AT - series.samples[0][0]


def test_the_scaler_reads_the_backfilled_days_with_the_compressed_day_as_its_season() -> None:
    spec = PredictiveScalerSpec.from_body(SCENARIO.scaler()["spec"])
    forecast = spec.forecast
    day = 96 * SCENARIO.seconds_per_step
    assert forecast.seasonality_seconds == day
    assert forecast.season_length == 96
    assert forecast.long_step_seconds == forecast.step_seconds == SCENARIO.seconds_per_step
    # The CRD's rules: longStep >= step, longHistory >= history, two seasons in longHistory.
    long_history = parse_duration(forecast.long_history)
    assert long_history >= 2 * day
    assert long_history >= parse_duration(forecast.history)
    # The whole backfill plus the replayed day fit in the long history.
    past = SCENARIO.past_load().size * SCENARIO.seconds_per_step
    assert long_history >= past + SCENARIO.duration_seconds
    # Scoring starts with two compressed days behind it: the season is learnable then.
    assert past + SCENARIO.warmup_seconds >= 2 * day


def test_a_step_of_a_fraction_of_a_second_is_refused() -> None:
    with pytest.raises(ValueError, match="whole"):
        Scenario(seconds_per_step=2.5)
