"""The operator-load benchmark's objects and figures, without a cluster."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from benchmarks.operator_load_classes import (
    Options,
    cheap_class,
    expensive_class,
    shortest_refresh,
    split,
)
from benchmarks.operator_load_figures import (
    ClassResult,
    LoadResult,
    condition_status,
    first_evaluations,
    gaps_and_shares,
    parse_metrics,
    per_object,
    since,
    whole_seconds,
)
from benchmarks.operator_load_observe import Observation, keep_stamps
from benchmarks.operator_load_report import class_row, mixed_sentence, operator_row, render
from predictive_scaler.operator.resource import PredictiveScalerSpec


def test_the_shortest_refresh_is_the_crds_floor_in_whole_seconds_up() -> None:
    # 10 s + 2.5 ms x 2,160 points = 15.4 s.
    assert shortest_refresh("3h", "5s") == "16s"
    assert shortest_refresh("6h", "1m") == "11s"  # 360 points: 10.9 s
    assert shortest_refresh("2000s", "1s") == "15s"  # exactly 15 s stays 15 s


def test_auto_leaves_every_forecast_setting_to_the_crd() -> None:
    cheap = cheap_class("auto", "60s")
    body = cheap.scaler("w-0003")
    assert "forecast" not in body["spec"]
    assert body["metadata"] == {"name": "w-0003", "namespace": "ps-load"}
    assert body["spec"]["scaleTargetRef"]["name"] == "w-0003"
    settings = cheap.settings
    assert (settings.models, settings.history, settings.step, settings.refresh) == (
        ("auto",),
        "6h",
        "1m",
        "1h",
    )
    assert cheap.selects
    assert cheap.names(2) == ["w-0000", "w-0001"]
    PredictiveScalerSpec.model_validate(body["spec"])


def test_holt_keeps_the_earlier_runs_settings() -> None:
    holt = cheap_class("holt", "30s")
    assert holt.scaler("w-0000")["spec"]["forecast"]["models"] == ["holt"]
    assert holt.sync_seconds == 30.0
    assert not holt.selects


def test_the_expensive_class_selects_on_2160_points_every_16_s_every_2_s() -> None:
    noisy = expensive_class()
    assert noisy.namespace == "ps-load-noisy"
    spec = noisy.scaler("x-0000")["spec"]
    assert spec["forecast"] == {"models": ["auto"], "history": "3h", "step": "5s", "refresh": "16s"}
    assert spec["syncPeriod"] == "2s"
    assert int(noisy.settings.history_points) == 2161  # the operator's count, both ends
    parsed = PredictiveScalerSpec.model_validate(spec)
    assert parsed.forecast.refresh == "16s"
    assert noisy.describe() == "auto on 3h at 5s steps, refresh 16s, syncPeriod 2s"


def test_the_expensive_share_rounds_half_up() -> None:
    assert split(10, 0.1) == (9, 1)
    assert split(1000, 0.1) == (900, 100)
    assert split(10, 0.0) == (10, 0)
    assert split(5, 0.1) == (4, 1)  # 0.5 rounds up
    assert split(4, 0.1) == (4, 0)


def test_the_deployments_made_are_the_most_any_run_needs(tmp_path: Path) -> None:
    options = Options(
        classes=(cheap_class("auto", "60s"), expensive_class()),
        mixes=(0.0, 0.1),
        cycles=2,
        workers=4,
        selection_workers=0,
        past="15d",
        logs=tmp_path,
    )
    assert options.largest([100, 1000]) == {"cheap": 1000, "expensive": 100}
    assert options.counts(1000, 0.1) == {"cheap": 900, "expensive": 100}
    assert options.window_seconds == 120.0
    assert "10%" in mixed_sentence(options.mixes)
    assert "refresh 16s" in mixed_sentence(options.mixes)
    assert mixed_sentence((0.0,)) == ""


def test_limits_are_read_in_whole_seconds() -> None:
    assert whole_seconds(60 * 1.1) == 66
    assert whole_seconds(2 * 1.1) == 3
    assert whole_seconds(2 * 1.5) == 3


def test_gaps_count_a_stopped_object_and_a_never_evaluated_one_as_late() -> None:
    seen = {
        "steady": {100.0, 160.0, 220.0},
        "slow": {100.0, 190.0, 230.0},  # one gap of 90 s
        "stopped": {100.0, 160.0},  # nothing for 80 s before the end
    }
    names = ["steady", "slow", "stopped", "never"]
    gaps, shares = gaps_and_shares(seen, names, (95.0, 240.9), [66.0, 90.0])
    # The end is read in whole seconds (240); the tails within 66 s are no gaps.
    assert sorted(gaps) == sorted([60.0, 60.0, 90.0, 40.0, 60.0, 80.0, 145.0])
    assert shares == [0.25, 0.75]  # steady; slow and stopped once 90 s is allowed


def test_after_start_up_keeps_the_gap_across_its_start() -> None:
    seen = {"restarted": {5.0, 116.0, 176.0}, "steady": {10.0, 70.0, 130.0, 190.0}}
    kept = since(seen, 120.0)
    assert kept == {"restarted": {116.0, 176.0}, "steady": {70.0, 130.0, 190.0}}
    # The 111 s start-up gap is gone, a gap that ends after the start still counts.
    _, shares = gaps_and_shares(kept, ["restarted", "steady"], (120.0, 200.0), [66.0])
    assert shares == [1.0]
    _, late = gaps_and_shares(since(seen, 100.0), ["restarted"], (100.0, 200.0), [66.0])
    assert late == [0.0]


def test_first_evaluations_run_from_the_operators_start() -> None:
    seen = {"a": {110.0, 170.0}, "b": {130.0}, "c": {99.0}}
    assert first_evaluations(seen, ["a", "b", "c"], 100.0) == (10.0, 30.0)
    p50, longest = first_evaluations(seen, ["a", "b", "c", "d"], 100.0)
    assert p50 == 10.0
    assert math.isnan(longest)
    assert all(math.isnan(v) for v in first_evaluations({}, ["a"], 100.0))


def test_per_object_gauges_and_conditions_are_read_by_object() -> None:
    text = (
        "# HELP predictive_scaler_evaluation_lateness_seconds How late\n"
        "# TYPE predictive_scaler_evaluation_lateness_seconds gauge\n"
        'predictive_scaler_evaluation_lateness_seconds{namespace="ps-load",name="w-0000"} 0.5\n'
        'predictive_scaler_evaluation_lateness_seconds{namespace="ps-load-noisy",name="x-0000"} 7\n'
    )
    found = per_object(parse_metrics(text), "predictive_scaler_evaluation_lateness_seconds")
    assert found == {("ps-load", "w-0000"): 0.5, ("ps-load-noisy", "x-0000"): 7.0}
    status = {
        "conditions": [
            {"type": "Ready", "status": "True"},
            {"type": "EvaluationsLate", "status": "False"},
        ]
    }
    assert condition_status(status, "EvaluationsLate") == "False"
    assert condition_status({}, "EvaluationsLate") is None


def result(classes: tuple[ClassResult, ...]) -> LoadResult:
    return LoadResult(
        objects=10,
        mix=0.2,
        classes=classes,
        creation_seconds=0.05,
        first_evaluation_seconds=math.nan,
        evaluations=20,
        evaluation_seconds=(0.1, 0.2, 0.25),
        selections=None,
        selection_cpu_p50=math.nan,
        api_by_kind={"GET deployments": 1.0, "PATCH predictivescalers/status": 1.0},
        peak_rss_mib=300.4,
        mean_rss_mib=290.0,
        cpu_cores=0.123,
        processes=3,
    )


def test_rows_say_n_a_for_what_the_operator_does_not_export() -> None:
    cheap = ClassResult(
        kind="cheap",
        objects=9,
        sync_seconds=60.0,
        first_evaluation=(2.0, math.nan),
        within=(0.889, 1.0),
        steady_within=(1.0, 1.0),
        gap_seconds=(60.0, 61.0, 75.0),
        lateness_seconds=None,
        late=None,
        forecasting=1.0,
        all_forecasting_after=math.nan,
    )
    row = class_row(10, cheap)
    assert row["class"] == "cheap (9)"
    assert row["first evaluation p50 / all"] == "2.00 s / not all"
    assert row["within interval +10 % / +50 %"] == "89% / 100%"
    assert row["after start-up"] == "100% / 100%"
    assert row["gap p50 / p95 / max"] == "60 / 61 / 75 s"
    assert row["lateness p50 / p95 / max"] == "n/a"
    assert row["EvaluationsLate"] == "n/a"
    assert row["all forecasting after"] == "not all"
    late = class_row(
        10, ClassResult(**{**vars(cheap), "lateness_seconds": (0.1, 2.0, 9.0), "late": 0.25})
    )
    assert late["lateness p50 / p95 / max"] == "0 / 2 / 9 s"
    assert late["EvaluationsLate"] == "25%"
    noisy = ClassResult(**{**vars(cheap), "kind": "expensive", "objects": 1})
    operator = operator_row(result((cheap, noisy)))
    assert operator["objects"] == "10 (1 expensive)"
    assert operator["first evaluation of all"] == "not all"
    assert operator["selections in window"] == "n/a"
    assert operator["API requests per object per cycle"] == "2.0"
    assert operator["CPU"] == "0.12 cores"
    assert operator["processes"] == "3"


def test_the_section_says_what_was_run(tmp_path: Path) -> None:
    args = argparse.Namespace(
        counts="10",
        model="auto",
        mix="0,0.2",
        sync_period="30s",
        cycles=2,
        workers=4,
        selection_workers=0,
        past="15d",
    )
    options = Options(
        classes=(cheap_class("auto", "30s"), expensive_class()),
        mixes=(0.0, 0.2),
        cycles=2,
        workers=4,
        selection_workers=0,
        past="15d",
        logs=tmp_path,
    )
    cheap = ClassResult(
        kind="cheap",
        objects=8,
        sync_seconds=30.0,
        first_evaluation=(2.0, 3.0),
        within=(1.0, 1.0),
        steady_within=(1.0, 1.0),
        gap_seconds=(30.0, 30.0, 30.0),
        lateness_seconds=None,
        late=None,
        forecasting=1.0,
        all_forecasting_after=12.0,
    )
    section = render([result((cheap,))], options, args, "notes")
    assert "--mix 0,0.2" in section
    assert "10 in `ps-load` and 2 in `ps-load-noisy`" in section
    assert "(every forecast setting at the CRD default)" in section
    assert "expensive share of 0% and 20%" in section
    assert "| 10 | cheap (8) | 30 s |" in section
    assert "### API requests per object per cycle, 10 objects" in section


def test_the_stamps_seen_are_kept_per_class_and_object_in_order(tmp_path: Path) -> None:
    cheap = cheap_class("auto", "60s")
    observation = Observation((cheap,), {cheap.kind: 2}, started=1000.0)
    observation.record(cheap, {"b": {"lastEvaluationTime": "1970-01-01T00:17:40Z"}})
    observation.record(cheap, {"b": {"lastEvaluationTime": "1970-01-01T00:16:40Z"}, "a": {}})
    path = tmp_path / "stamps.json"
    keep_stamps(observation, path)
    kept = json.loads(path.read_text())
    assert kept == {"started": 1000.0, "stamps": {cheap.kind: {"b": [1000.0, 1060.0]}}}
