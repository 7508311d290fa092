"""The forecasting benchmark's markdown: method, targets, accuracy, bands, cost and speed."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from benchmarks.forecast_runs import (
    COLD_START_DAYS,
    HORIZON,
    LEVEL,
    LONG_SECONDS,
    LONG_STEP_SECONDS,
    RECENT_SECONDS,
    RunSize,
)
from benchmarks.forecasting_accuracy import (
    GAP_CONFIDENCE,
    GAP_RESAMPLES,
    SCORED_HORIZONS,
    WORST_QUANTILE,
    TraceResult,
)
from benchmarks.forecasting_coverage import WALK_SCORED, WALK_WARMUP, WalkResult
from benchmarks.forecasting_field import FieldRow
from benchmarks.forecasting_speed import (
    AUTO_CACHED,
    AUTO_FRESH,
    TIMED_ANCHORS,
    TIMING_LENGTHS,
    TIMING_SEASON,
    YARDSTICK_ORDER,
    YARDSTICK_POINTS,
    YARDSTICK_REPEATS,
    SpeedRow,
    Yardstick,
)
from benchmarks.forecasting_targets import (
    FLEET,
    UPDATE_EVERY_SECONDS,
    Cost,
    TargetCheck,
    best_anchor,
    format_coverage,
    format_gap,
    format_share,
    format_triple,
    gaps_to_best_anchor,
    row_for,
)
from benchmarks.report import format_seconds, machine_description, package_versions, table
from predictive_scaler.forecasting import Auto
from predictive_scaler.forecasting.calibration import MIN_ERRORS
from predictive_scaler.forecasting.refresh import DEFAULT_REFRESH_SECONDS

LIBRARIES = ("numpy", "statsmodels", "scikit-learn", "statsforecast")
# "1/2/5": the horizons every table's columns are headed with.
HORIZONS_LABEL = "/".join(str(h) for h in SCORED_HORIZONS)


@dataclass(frozen=True)
class Settings:
    traces_dir: Path
    output: Path
    quick: bool
    size: RunSize


def render_setup(results: Sequence[TraceResult], walks: Sequence[WalkResult]) -> list[str]:
    rows = []
    for result, walked in zip(results, walks, strict=True):
        spec = result.spec
        per_vm = f" ({result.workloads} VMs)" if spec.vm_column else ""
        low, high = result.long_points
        seasons = ", ".join(f"{name} {count}" for name, count in result.seasons)
        rows.append(
            [
                f"{spec.label}{per_vm}",
                f"`{spec.file}` `{spec.column}`",
                f"{result.step_seconds:g} s",
                f"{result.points:,}",
                f"{result.recent_points}",
                f"{low:,}" if low == high else f"{low:,}-{high:,}",
                seasons,
                str(result.origins),
                str(walked.walks),
            ]
        )
    header = [
        "trace",
        "file, column",
        "step",
        "points",
        "recent window (points)",
        "long history (5-min points)",
        "seasons found (origins)",
        "origins",
        "walks",
    ]
    return table(header, rows)


def render_summary(results: Sequence[TraceResult]) -> list[str]:
    header = [
        "trace",
        f"auto MASE h={HORIZONS_LABEL}",
        f"best anchor MASE h={HORIZONS_LABEL}",
        f"auto worst origin h={HORIZONS_LABEL}",
        f"best anchor worst origin h={HORIZONS_LABEL}",
        f"auto - best anchor h={HORIZONS_LABEL} [{GAP_CONFIDENCE:.0%} interval]",
    ]
    rows = []
    for result in results:
        auto = row_for(result, Auto.name)
        best, worst = best_anchor(result), best_anchor(result, "worst")
        rows.append(
            [
                result.spec.label,
                format_triple(auto.mase),
                f"{format_triple([v for v, _ in best])} ({'/'.join(n for _, n in best)})",
                format_triple(auto.worst),
                f"{format_triple([v for v, _ in worst])} ({'/'.join(n for _, n in worst)})",
                " / ".join(format_gap(gap) for gap in gaps_to_best_anchor(result)),
            ]
        )
    return table(header, rows)


def render_field(field: Sequence[FieldRow]) -> list[str]:
    header = [
        "contender",
        "against the best of",
        "cells at or below it",
        "cells behind beyond the origins' spread",
        "meets the target",
        "resamples of the origins in which it meets the target",
    ]
    rows = [
        [
            f"**{row.contender}**" if row.contender == Auto.name else row.contender,
            ", ".join(row.rivals),
            f"{row.at_or_below} of {row.cells}",
            str(row.behind_beyond_noise),
            "yes" if row.meets_target else "no",
            format_share(row.resampled_share),
        ]
        for row in field
    ]
    return table(header, rows)


def render_walks(walks: Sequence[WalkResult]) -> list[str]:
    steps = "/".join(str(h) for h in range(1, HORIZON + 1))
    header = [
        "trace",
        "walks x scored steps",
        f"in the band, steps 1..{HORIZON}",
        f"in the band at h={steps}",
        "at or below the upper bound",
        "band width / load",
        "band from live errors",
        f"MASE h={HORIZONS_LABEL}",
    ]
    rows = [
        [
            w.trace,
            f"{w.walks} x {WALK_SCORED} = {w.forecasts}",
            format_coverage(w.coverage, w.coverage_error),
            " / ".join(f"{share:.0%}" for share in w.coverage_by_step),
            format_share(w.below_upper),
            f"{w.width:.2f}",
            format_share(w.calibrated),
            format_triple(w.mase),
        ]
        for w in walks
    ]
    return table(header, rows)


def render_costs(costs: Sequence[Cost]) -> list[str]:
    header = [
        "trace",
        "fresh selection, median",
        "update, median",
        f"{FLEET:,} workloads: share of one core",
    ]
    rows = [
        [
            c.trace,
            f"{format_seconds(c.fresh)} ({c.fresh_count})",
            f"{format_seconds(c.update)} ({c.update_count})",
            f"{c.cpu_share:.0%}",
        ]
        for c in costs
    ]
    return table(header, rows)


def render_accuracy(result: TraceResult) -> list[str]:
    header = [
        "model",
        f"MASE h={HORIZONS_LABEL}",
        f"ratio to seasonal naive h={HORIZONS_LABEL}",
        f"p{WORST_QUANTILE * 100:.0f} origin h={HORIZONS_LABEL}",
        f"worst origin h={HORIZONS_LABEL}",
        f"{LEVEL:.0%} band: load inside",
        "band width / load",
        "time per fit",
        "scored",
        "fallbacks or failures",
    ]
    rows = []
    for row in result.rows:
        problem = f"{row.problems}: {row.first_problem[:80]}" if row.problems else "0"
        rows.append(
            [
                f"**{row.model}**" if row.model == Auto.name else row.model,
                format_triple(row.mase),
                format_triple(row.ratio_to_seasonal_naive),
                format_triple(row.p95),
                format_triple(row.worst),
                format_share(row.coverage),
                f"{row.width:.2f}",
                format_seconds(row.seconds),
                f"{row.scored}/{result.origins}",
                problem.replace("|", "/"),
            ]
        )
    choices = ", ".join(f"{name} {count}" for name, count in result.auto_choices)
    return [f"#### {result.spec.label}", "", *table(header, rows), "", f"auto chose: {choices}."]


def render_speed(rows: Sequence[SpeedRow]) -> list[str]:
    header = ["model", *(f"one series, {length} points" for length in TIMING_LENGTHS)]
    body = [[row.model, *(format_seconds(value) for value in row.per_series)] for row in rows]
    return table(header, body)


def render_header(
    settings: Settings, elapsed: float, load_before: float, yardstick: Yardstick
) -> list[str]:
    command = ".venv/bin/python -m benchmarks.forecasting" + (" --quick" if settings.quick else "")
    quick_note = " (**quick run**: fewer origins, VMs and walks)" if settings.quick else ""
    return [
        "## Forecasting: accuracy, bands and cost on real traces, against outside anchors",
        "",
        f"- Date: {datetime.now(UTC):%Y-%m-%d}; the run took {elapsed / 60:.1f} min{quick_note}",
        f"- Machine: {machine_description()}; BLAS/OpenMP limited to one thread, as the library "
        f"runs its models; load average {load_before:.2f} before the run, "
        f"{os.getloadavg()[0]:.2f} after",
        f"- Yardstick: one statsmodels ARIMA{YARDSTICK_ORDER} fit on the same "
        f"{YARDSTICK_POINTS} points in every run (an order search is most of a fresh "
        f"selection) took {format_seconds(yardstick.start)} of CPU at the start of the run and "
        f"{format_seconds(yardstick.end)} at the end (median of {YARDSTICK_REPEATS}): the "
        "times below scale with it from run to run and machine to machine",
        f"- Reproduce: `{command}` (traces from `traces/`)",
        f"- Libraries: {package_versions(LIBRARIES)}",
    ]


METHOD = (
    "Rolling origin, every model on the same histories. At each origin the windows of issue "
    f"16's case are cut from the trace: the operator's default recent window of "
    f"{RECENT_SECONDS / 3600:g} h at the trace's own step (360 points at NASA's minute, 720 at "
    f"Alibaba's 30 s, 72 at Azure's and Google's 5 min) and a long history of up to "
    f"{LONG_SECONDS / 86_400:g} days (the operator reads 15 by default, two weeks and a day "
    f"to spare for gaps) before the origin in {LONG_STEP_SECONDS / 60:g}-minute means of the "
    "observed points "
    "(a bin with none is missing, as a Prometheus gap would be). Every registry model fits "
    "the recent window; `auto` is a fresh `ScheduledSelection('auto').forecast_series(recent, "
    f"{HORIZON}, {LEVEL}, now, long=long)`, the operator's path: seasons are found in the long "
    "history and their profile competes under the recent window's models. `seasonal_naive` "
    "repeats the value one (shortest found) season back, read from the long span at the "
    "trace's step; with no season found it is naive. The anchors: statsforecast's AutoETS, "
    "AutoARIMA and AutoTheta fit the recent window with season 1 (6 h hold no daily cycle); "
    "MSTL fits the long history's span at the trace's step with the seasons `find_seasons` "
    "detects in the long history, in trace steps (a day is 1,440 steps at NASA, 2,880 at "
    "Alibaba, 288 at Azure; a week when found), its trend by AutoETS as statsforecast does. "
    "That span at the trace's own step is more than `auto` sees (5-minute means), which can "
    "only favour the anchor; interpolating the 5-minute means back would have given MSTL's "
    "trend model a smooth past and a noisy present. STL runs with R's stl() jumps (a tenth of "
    "each window, for the shortest season, statsforecast passing one set of STL arguments): "
    "at a NASA origin the same forecasts as without to 0.1 request per minute, and two weeks "
    "at 1 min with a day and a week in 4 s instead of 6 min. Where no season is found MSTL "
    "is its trend model alone on the recent "
    "window, and says so in the last column. Anchors' forecasts and bands are clipped at 0, "
    "as the library's are. The anchors' mean is a reference, not a contender: at each origin "
    "the equal-weight mean of the four anchors' forecasts and bounds (its time is the sum of "
    f"theirs). Origins are spread over those with {HORIZON} observed steps after "
    "them, a whole observed recent window, and at least 14 days of trace before them (NASA, "
    "Azure), 4 days (Alibaba, which holds 8) or the recent window (a Google VM holds 24 h, so "
    "no season can be found there). NASA's outage (zeros for an hour or more) is missing in "
    "the long history and filled by `clean_series` elsewhere. Horizon h is scored on steps "
    "1..h: MASE divides the mean absolute error by the mean one-step change over the long "
    "span at the trace's step (the same scale for every model at an origin). The ratio is a "
    "model's mean MASE over seasonal_naive's; the p95 and worst-origin columns are the 95th "
    "percentile and the maximum of the per-origin MASE. The band columns pool every step "
    f"1..{HORIZON} of every origin: the share of the load inside the model's own {LEVEL:.0%} "
    "band, and the band's mean width over the mean load. Time per fit is the median CPU time "
    "of one fit and forecast on one thread (auto: the whole `forecast_series`, both "
    "selections included): the cost on one core, which a busy machine's wall clock would "
    "inflate. Every fit starts from empty caches: no model reuses the order search that "
    "another made of the same window, as no workload's selection can."
)


GAP_METHOD = (
    "The lowest anchor figure at each horizon, and whose it is. The last column is auto's "
    "mean MASE minus that anchor's over the same origins, compared origin by origin, with a "
    f"{GAP_CONFIDENCE:.0%} interval from {GAP_RESAMPLES:,} bootstrap resamples of the origins "
    "(a Google VM's three origins are resampled together, as they share the VM). Where the "
    "interval holds 0, these origins cannot tell auto and the anchor apart. The best anchor "
    "is picked per horizon after the fact, on these same origins, which flatters it: an "
    "interval above 0 is evidence that auto is behind, not a measure of by how much."
)


FIELD_METHOD = (
    "The first target asked of every contender. A cell is one trace at one horizon (4 traces "
    "x 3 horizons); in each, the contender's mean MASE is compared with the lowest of its "
    "rivals', that lowest picked after the fact as the target picks it. An anchor's rivals "
    "are the other three anchors; auto's and the anchors' mean's are all four. A cell is "
    "behind beyond the origins' spread where the paired 95% interval of the gap to that "
    "rival lies above 0, as in the table above. The last column draws the origins again "
    f"{GAP_RESAMPLES:,} times (per trace, a Google VM's origins together, the same draw for "
    "every contender) and counts the draws in which the contender is at or below its best "
    "rival in all twelve cells at once: how often the target would be met on other origins "
    "of the same traces."
)


WALK_METHOD = (
    f"`auto` walking: {WALK_WARMUP + WALK_SCORED} consecutive steps from each start, one "
    "`ScheduledSelection('auto')` given the recent window and the long history at every step, "
    f"as the operator does: it selects afresh every {DEFAULT_REFRESH_SECONDS / 3600:g} h (its "
    "default refresh, so every 60 steps at NASA, 120 at Alibaba, 12 at Azure and Google) and "
    "only updates in between, and once it holds "
    f"{MIN_ERRORS} errors of forecasts it really made its band is calibrated on them. The "
    f"first {WALK_WARMUP} steps fill those errors; the next {WALK_SCORED} are scored, every "
    f"step 1..{HORIZON} of each forecast. Starts are spread like the origins (Google: one walk "
    "on each VM). In brackets, the coverage's standard error in points, from the spread of the "
    "walks' own coverages (a walk's steps are correlated, so they are not counted as "
    "independent). A fresh selection at an origin (the accuracy tables) has no live "
    "errors yet and takes its band from its backtest."
)


def render_cost_intro() -> str:
    return (
        "A fresh selection is `auto`'s `forecast_series` at the accuracy origins (a new "
        "`ScheduledSelection` each time; both the plain and the seasonal selection when a "
        "season is found); an update is every walking call between two selections. NASA's "
        "windows are the issue's case: 14 days at 5 min (4,032 points) plus 6 h at 1 min "
        f"(360). The share of one core for {FLEET:,} workloads selected every "
        f"{DEFAULT_REFRESH_SECONDS / 3600:g} h and updated every {UPDATE_EVERY_SECONDS:g} s is "
        f"{FLEET:,} x (fresh / {DEFAULT_REFRESH_SECONDS:g} s + update / "
        f"{UPDATE_EVERY_SECONDS:g} s), from the medians, one thread."
    )


def render_speed_intro() -> str:
    anchors = ", ".join(TIMED_ANCHORS)
    return (
        f"Median CPU time (one thread) of make_model + fit + predict({HORIZON}, {LEVEL}) on "
        f"one series (a NASA slice, season {TIMING_SEASON}) over repeats after a warm-up. "
        f"`{AUTO_FRESH}` includes `select_model`; `{AUTO_CACHED}` refits with a selection "
        f"made earlier on the same series. {anchors} with season 1, as in the accuracy "
        "tables; MSTL needs two days of the series (its time per fit is in the accuracy "
        "tables). The earlier column of 1,000 series run one after the other is replaced by "
        "the cost of 1,000 workloads on the operator's path above."
    )


def render_cold_start_intro(results: Sequence[TraceResult]) -> str:
    first, last = COLD_START_DAYS
    found = "; ".join(
        f"{result.spec.label}: {result.origins} origins, long history "
        f"{result.long_points[0]:,}-{result.long_points[1]:,} points, seasons found "
        + ", ".join(f"{name} {count}" for name, count in result.seasons)
        for result in results
    )
    return (
        f"A new workload's first two weeks: origins from day {first:g} to day {last:g} of the "
        "traces that hold them, where a daily season can be learnt and a weekly one only in "
        "the last days (two weeks are needed; the main origins above begin at day 14). Same "
        "histories, scores and comparison as above; only `auto`, the two baselines and the "
        "anchors run. No target is set for this regime; it is reported because every "
        f"workload passes through it. {found}."
    )


def render_report(
    settings: Settings,
    *,
    results: Sequence[TraceResult],
    cold_starts: Sequence[TraceResult],
    walks: Sequence[WalkResult],
    costs: Sequence[Cost],
    speed: Sequence[SpeedRow],
    field: Sequence[FieldRow],
    checks: Sequence[TargetCheck],
    elapsed: float,
    load_before: float,
    yardstick: Yardstick,
) -> str:
    check_rows = [
        [check.target, "reached" if check.reached else "**not reached**", check.evidence]
        for check in checks
    ]
    lines = [
        *render_header(settings, elapsed, load_before, yardstick),
        "",
        "### Method",
        "",
        METHOD,
        "",
        *render_setup(results, walks),
        "",
        "### Targets",
        "",
        *table(["target", "result", "figures"], check_rows),
        "",
        "### auto against the best anchor",
        "",
        GAP_METHOD,
        "",
        *render_summary(results),
        "",
        "### The target asked of every contender",
        "",
        FIELD_METHOD,
        "",
        *render_field(field),
        "",
        "### auto's band, walking",
        "",
        WALK_METHOD,
        "",
        *render_walks(walks),
        "",
        "### Cost on the operator's path",
        "",
        render_cost_intro(),
        "",
        *render_costs(costs),
        "",
        "### Accuracy",
        "",
    ]
    for result in results:
        lines += [*render_accuracy(result), ""]
    if cold_starts:
        lines += [
            "### Cold start",
            "",
            render_cold_start_intro(cold_starts),
            "",
            *render_summary(cold_starts),
            "",
        ]
        for result in cold_starts:
            lines += [*render_accuracy(result), ""]
    lines += ["### Speed", "", render_speed_intro(), "", *render_speed(speed)]
    return "\n".join(lines) + "\n"
