"""The demo's scenario, its figures and its terminal view, without a cluster."""

from __future__ import annotations

import io

import numpy as np
import pytest

from predictive_scaler.operator.resource import PredictiveScalerSpec
from predictive_scaler_dev.demo.load import Tick
from predictive_scaler_dev.demo.scenario import Scenario
from predictive_scaler_dev.demo.summary import baseline, measured, summarise, table
from predictive_scaler_dev.demo.view import Frame, LiveView, render, sparkline

SCENARIO = Scenario()


WARMUP = SCENARIO.warmup_steps


def test_the_replayed_day_is_96_quarter_hours_after_a_warm_up_of_the_day_before() -> None:
    load = SCENARIO.load()
    assert WARMUP == 40  # 80 s: Prometheus's once-a-minute block reload, then first decisions
    assert load.size == WARMUP + 96
    day = load[WARMUP:]
    assert day.max() == pytest.approx(SCENARIO.peak_cores)
    # NASA's Monday: the small hours are quieter than the afternoon.
    assert day[16:24].mean() < day[52:60].mean() / 2
    assert SCENARIO.duration_seconds == 2 * (WARMUP + 96)
    assert SCENARIO.clock(0) == "14:00"  # 40 quarter hours before midnight
    assert SCENARIO.clock(SCENARIO.warmup_seconds) == "00:00"
    assert SCENARIO.clock(SCENARIO.warmup_seconds + 2 * 38 + 1) == "09:37"


def test_a_later_start_replays_that_part_of_the_same_day_warm_up_included() -> None:
    day = SCENARIO.load()[WARMUP:]
    afternoon = Scenario(start_hour=12, hours=6).load()
    assert np.array_equal(afternoon, day[48 - WARMUP : 72])


@pytest.mark.parametrize(
    ("start", "hours", "seconds"), [(20, 6, 2.0), (-1, 2, 2.0), (0, 0, 2.0), (0, 24, 0.5)]
)
def test_a_replay_outside_the_day_or_too_fast_is_refused(
    start: int, hours: int, seconds: float
) -> None:
    with pytest.raises(ValueError, match=r"day|seconds per step"):
        Scenario(start_hour=start, hours=hours, seconds_per_step=seconds)


def test_the_load_of_a_step_holds_for_the_whole_step() -> None:
    load = SCENARIO.load()
    assert SCENARIO.load_at(load, 0.0) == load[0]
    assert SCENARIO.load_at(load, 1.99) == load[0]
    assert SCENARIO.load_at(load, 2.0) == load[1]
    assert SCENARIO.load_at(load, 10_000.0) == load[-1]


def test_the_manifests_are_what_the_operator_accepts() -> None:
    load = SCENARIO.load()
    spec = PredictiveScalerSpec.from_body(SCENARIO.scaler()["spec"])
    scaling = spec.scaling_spec()
    # Sized from a pod's capacity (its CPU request) within the default budget.
    assert (scaling.capacity_per_replica, scaling.overload_budget) == (1.0, 0.01)
    # The HPA's 300 s scale-down window, compressed as the trace is (450 x): one second.
    assert scaling.effective_behavior.scale_down.stabilization_window_seconds == 1
    # The HPA's and the scaler's behaviors state what they set, no empty tolerance.
    for behavior in (
        SCENARIO.scaler()["spec"]["scaling"]["behavior"],
        SCENARIO.hpa()["spec"]["behavior"],
    ):
        assert set(behavior["scaleUp"]) == {
            "stabilizationWindowSeconds",
            "selectPolicy",
            "policies",
        }
    deployment = SCENARIO.deployment(load)
    replicas = deployment["spec"]["replicas"]
    # Enough for the first start-up period at the target, as the replay starts every policy.
    assert replicas * 0.7 >= load[:2].max()
    # The two backfilled days (both ends of the window), in Prometheus by the first scored step.
    assert spec.forecast.history_points == 2 * 96 + 1
    assert SCENARIO.history_steps <= SCENARIO.first_scored_step
    annotations = deployment["spec"]["template"]["metadata"]["annotations"]
    assert list(annotations.values()) == ["2s"]


def test_keda_scales_on_the_operators_own_cpu_query_at_the_same_target() -> None:
    body = SCENARIO.scaled_object("http://127.0.0.1:9090", scrape_interval_seconds=2.0)
    spec = body["spec"]
    assert (spec["minReplicaCount"], spec["maxReplicaCount"]) == (2, 20)
    (trigger,) = spec["triggers"]
    assert trigger["type"] == "prometheus"
    # AverageValue per replica: 70 % of one replica's request of 1 core.
    assert float(trigger["metadata"]["threshold"]) == pytest.approx(0.7)
    query = trigger["metadata"]["query"]
    # Its own Deployment's pods only, over the operator's recent window: two
    # 2 s steps, but at least four scrapes.
    assert r'pod=~"web\\-keda-[a-z0-9]{1,10}-[a-z0-9]{5}",' in query
    assert query.endswith("[8s]))")
    # KEDA's 30 s polling and the HPA's 300 s scale-down window, compressed 450 x.
    assert spec["pollingInterval"] == 1
    behavior = spec["advanced"]["horizontalPodAutoscalerConfig"]["behavior"]
    assert behavior["scaleDown"]["stabilizationWindowSeconds"] == 1


def _ticks(rows: list[tuple[float, float, int, int]]) -> list[Tick]:
    return [Tick(seconds, load, replicas, running) for seconds, load, replicas, running in rows]


def test_measured_figures_weight_each_tick_by_the_trace_time_it_covers() -> None:
    # One warm-up step and 4 scored steps of 2 s; one wall second is 7.5 trace minutes.
    scenario = Scenario(hours=1, min_warmup_seconds=2.0)
    ticks = _ticks(
        [
            (0.0, 1.0, 2, 2),  # the warm-up: not scored, but the replicas to compare with
            (2.0, 1.0, 2, 2),
            (4.0, 3.0, 3, 2),  # 1 core short for 2 s, the scale-up still starting
            (6.0, 3.0, 3, 3),
            (8.0, 3.0, 3, 3),
        ]
    )
    outcome = measured(ticks, scenario)
    assert outcome.overload_minutes == pytest.approx(15.0)
    assert outcome.replica_minutes == pytest.approx(2 * 15 + 3 * 15 + 3 * 15 + 3 * 15)
    assert outcome.scaling_actions == 1
    assert outcome.unserved == pytest.approx(1.0)
    # A core per replica: demand 1 3 3 3 against 2 2 3 3 running, 15 trace minutes each.
    assert outcome.elasticity.metrics() == pytest.approx(
        {
            "under_accuracy": 100 * (1 / 3) / 4,
            "over_accuracy": 100 * 1 / 4,
            "under_timeshare": 25.0,
            "over_timeshare": 25.0,
            "instability": 100 * 2 / 3,
        }
    )


def _step_before(seconds: float, steps: int) -> int:
    return min(steps - 1, max(0, int(seconds // SCENARIO.seconds_per_step) - 1))


def test_the_summary_compares_with_the_hpa_replayed_on_the_same_load() -> None:
    load = SCENARIO.load()
    replicas = SCENARIO.initial_replicas(load)
    ticks = _ticks(
        [
            (s, SCENARIO.load_at(load, s), replicas, replicas)
            for s in np.arange(0, SCENARIO.duration_seconds, 1.0)
        ]
    )
    # The real HPA's Deployment followed the replayed HPA exactly, a step late.
    reactive = baseline(load, SCENARIO)
    hpa_ticks = _ticks(
        [
            (s, SCENARIO.load_at(load, s), r, r)
            for s in np.arange(0, SCENARIO.duration_seconds, 1.0)
            for r in [int(reactive.replicas[_step_before(s, reactive.replicas.size)])]
        ]
    )
    # KEDA's Deployment held the night's replicas all day, as the operator's did.
    summary = summarise(ticks, hpa_ticks, ticks, load, SCENARIO, metric_resolution_seconds=10.0)
    assert summary.baseline == reactive.outcome
    assert summary.baseline.replica_minutes > 0
    assert summary.baseline_peak_replicas > replicas  # the HPA had to scale for the peak
    assert summary.trace_minutes == 24 * 60
    # Constant replicas sized for the night are overloaded in the afternoon.
    assert summary.operator.overload_minutes > 0
    assert summary.operator.scaling_actions == 0
    assert summary.hpa_peak_replicas == summary.baseline_peak_replicas
    assert summary.hpa.replica_minutes > 0
    assert summary.hpa.overload_minutes >= summary.baseline.overload_minutes  # a step late
    # 10 s of wall time at 15 trace minutes per 2 s.
    assert summary.hpa_metric_age_minutes == pytest.approx(75.0)
    assert summary.keda == summary.operator
    assert summary.keda_peak_replicas == replicas
    lines = table(summary)
    assert [line.split("  ")[0] for line in lines[1:5]] == [
        "predictive-scaler (measured)",
        "HPA controller (measured)",
        "KEDA, Prometheus (measured)",
        "reactive HPA (replayed)",
    ]
    assert any("replayed HPA against the real one" in line for line in lines)


def test_the_view_names_overload_and_falls_back_to_lines_without_a_terminal() -> None:
    frame = Frame(
        seconds=40.0,
        duration=192.0,
        clock="05:00",
        warming_up=False,
        load=3.5,
        replicas=4,
        running=3,
        capacity=1.0,
        status={"desiredReplicas": 5, "decision": "scale up to 5"},
        load_history=[1.0, 2.0, 3.5],
        replica_history=[3, 3, 4],
    )
    lines = render(frame)
    assert any("OVERLOADED" in line for line in lines)
    assert "scale up to 5" in lines[-1]
    assert "gathering history" in lines[2]
    stream = io.StringIO()
    view = LiveView(stream, every=10.0)
    view.show(frame)
    view.show(frame)  # within 10 s of the last line: nothing new
    written = stream.getvalue().splitlines()
    assert len(written) == 1
    assert "\x1b" not in written[0]
    assert written[0] == "[05:00] load 3.50 cores, replicas 4 (3 running): scale up to 5"


def test_sparkline_scales_to_its_highest_value() -> None:
    assert sparkline([0.0, 1.0, 2.0]) == "▁▄█"
    assert sparkline([]) == ""
