"""The operator-load benchmark's section of BENCHMARKS.md: its tables and its method in words."""

from __future__ import annotations

import argparse
import datetime
import math
from collections.abc import Sequence

from benchmarks.operator_load_classes import (
    CREATORS,
    EXPENSIVE_HISTORY,
    EXPENSIVE_STEP,
    NAMESPACE,
    NOISY_NAMESPACE,
    OPERATOR_SCRAPE_SECONDS,
    POD_USAGE,
    Options,
    expensive_class,
)
from benchmarks.operator_load_figures import (
    API_COUNTER,
    HISTOGRAM,
    LATE_CONDITION,
    LATENESS_GAUGE,
    SELECTION_HISTOGRAM,
    ClassResult,
    LoadResult,
)
from benchmarks.report import format_seconds, machine_description, table
from predictive_scaler.scaling.policy import MAX_MISSING_SHARE
from predictive_scaler.units import parse_duration


def figures(values: Sequence[float], scale: float, unit: str) -> str:
    return " / ".join("n/a" if math.isnan(v) else f"{v * scale:.0f}" for v in values) + f" {unit}"


def class_row(count: int, result: ClassResult) -> dict[str, str]:
    """One row of the objects' table, by column header."""
    p50, longest = result.first_evaluation
    lateness = result.lateness_seconds
    return {
        "objects": f"{count:,}",
        "class": f"{result.kind} ({result.objects:,})",
        "syncPeriod": f"{result.sync_seconds:g} s",
        "first evaluation p50 / all": (
            f"{format_seconds(p50)} / "
            + ("not all" if math.isnan(longest) else format_seconds(longest))
        ),
        "within interval +10 % / +50 %": " / ".join(f"{share:.0%}" for share in result.within),
        "after start-up": " / ".join(f"{share:.0%}" for share in result.steady_within),
        "gap p50 / p95 / max": figures(result.gap_seconds, 1, "s"),
        "lateness p50 / p95 / max": "n/a" if lateness is None else figures(lateness, 1, "s"),
        LATE_CONDITION: "n/a" if result.late is None else f"{result.late:.0%}",
        "forecasting": f"{result.forecasting:.0%}",
        "all forecasting after": (
            "not all"
            if math.isnan(result.all_forecasting_after)
            else format_seconds(result.all_forecasting_after)
        ),
    }


def operator_row(result: LoadResult) -> dict[str, str]:
    """One row of the operator's table, by column header."""
    api = result.api_per_object_cycle
    selections = (
        "n/a"
        if result.selections is None
        else f"{result.selections:,} ({figures([result.selection_cpu_p50], 1e3, 'ms')} CPU p50)"
    )
    expensive = sum(c.objects for c in result.classes if c.kind == "expensive")
    return {
        "objects": f"{result.objects:,}" + (f" ({expensive:,} expensive)" if expensive else ""),
        "creation": format_seconds(result.creation_seconds),
        "first evaluation of all": (
            "not all"
            if math.isnan(result.first_evaluation_seconds)
            else format_seconds(result.first_evaluation_seconds)
        ),
        "evaluations in window": f"{result.evaluations:,}",
        "evaluation p50 / p95 / p99": figures(result.evaluation_seconds, 1e3, "ms"),
        "selections in window": selections,
        "API requests per object per cycle": "n/a" if api is None else f"{api:.1f}",
        "peak RSS": f"{result.peak_rss_mib:.0f} MiB",
        "mean RSS": f"{result.mean_rss_mib:.0f} MiB",
        "CPU": f"{result.cpu_cores:.2f} cores",
        "processes": f"{result.processes}",
    }


def results_tables(results: Sequence[LoadResult]) -> list[str]:
    rows = [class_row(r.objects, c) for r in results for c in r.classes]
    operator = [operator_row(r) for r in results]
    return [
        *table(list(rows[0]), [list(row.values()) for row in rows]),
        "",
        *table(list(operator[0]), [list(row.values()) for row in operator]),
    ]


def scaling_curve(results: Sequence[LoadResult]) -> str:
    """From the smallest to the largest count at the first mix."""
    same = [r for r in results if r.mix == results[0].mix]
    if len(same) < 2:
        return "One count only, so no scaling curve."
    small, large = same[0], same[-1]
    per_added = (large.peak_rss_mib - small.peak_rss_mib) * 1024 / (large.objects - small.objects)
    return (
        f"From {small.objects:,} to {large.objects:,} objects, peak RSS grows from "
        f"{small.peak_rss_mib:.0f} to {large.peak_rss_mib:.0f} MiB ({per_added:.0f} KiB per "
        f"added object) and CPU from {small.cpu_cores:.2f} to {large.cpu_cores:.2f} cores "
        f"({small.cpu_cores * 1e3 / small.objects:.1f} millicores per object at "
        f"{small.objects:,}, {large.cpu_cores * 1e3 / large.objects:.1f} at {large.objects:,})."
    )


def reproduce(args: argparse.Namespace) -> str:
    return (
        f"`.venv/bin/python -m benchmarks.operator_load --counts {args.counts} --model "
        f"{args.model} --mix {args.mix} --sync-period {args.sync_period} --cycles "
        f"{args.cycles} --workers {args.workers} --selection-workers {args.selection_workers} "
        f"--past {args.past}`"
    )


def mixed_sentence(mixes: Sequence[float]) -> str:
    """What the expensive share of a run means, or nothing when no run has one."""
    if not any(mixes):
        return ""
    shares = " and ".join(f"{mix:.0%}" for mix in mixes)
    points = int(parse_duration(EXPENSIVE_HISTORY) // parse_duration(EXPENSIVE_STEP))
    return (
        f" Each count runs with an expensive share of {shares}: that share of its objects "
        f"(rounded) is expensive instead, in `{NOISY_NAMESPACE}` so that fair queueing between "
        f"namespaces shows: {expensive_class().describe()} (the shortest refresh the CRD "
        f"accepts for {points:,} points, 10 s plus 2.5 ms a point, in whole seconds up)."
    )


def method(results: Sequence[LoadResult], options: Options, args: argparse.Namespace) -> str:
    made = options.largest([r.objects for r in results])
    deployments = " and ".join(
        f"{made[c.kind]:,} in `{c.namespace}`" for c in options.classes if made[c.kind]
    )
    cheap = options.classes[0]
    defaults = " (every forecast setting at the CRD default)" if cheap.forecast is None else ""
    processes = args.selection_workers or "at its default, one per core"
    return (
        "On the local control plane (API server, etcd, kwok nodes, Prometheus scraping every "
        f"2 s, the operator every {OPERATOR_SCRAPE_SECONDS:g} s as the chart's ServiceMonitor "
        f"does), {CREATORS} threads first create one-pod Deployments, {deployments} (10m CPU "
        f"requested, {POD_USAGE} used through kwok's usage annotation). Each gets "
        f"{args.past} of CPU history before its pods started, backfilled into Prometheus with "
        "promtool as the counter of one past pod matching the Deployment's pod names: a daily "
        f"sine ({POD_USAGE} +- 40 %) with noise, at a phase of its own, every half step over "
        "the recent history and every 150 s before. The run waits until Prometheus has loaded "
        "every sample and until the load of each Deployment, as the operator's range query "
        f"reads it, has {MAX_MISSING_SHARE + 0.1:.0%} of its history (below "
        f"{MAX_MISSING_SHARE:.0%} the operator holds with MissingMetrics and fits no model), "
        "and until Prometheus has compacted the blocks. For each count N the threads then "
        f"create N PredictiveScalers on the first Deployments, in `{NAMESPACE}`: "
        f"{cheap.describe()}{defaults}, Auto, CPU, targetPerReplica 500m, 1 to 3 replicas, "
        f"leadTime 60s; creation is their wall time.{mixed_sentence(options.mixes)} One "
        f"`predictive-scaler run` ({args.workers} evaluation threads, selection processes "
        f"{processes}, rebalancing off) is started on the namespaces. From its launch every "
        "status change of the objects is watched (a list every quarter period catches up "
        "what a watch that had to list again missed), until each has "
        "`status.lastEvaluationTime` (first evaluation, from the operator's launch), then for "
        f"{args.cycles} periods of {cheap.sync_period}, and a last list at the end. Each "
        "object's successive `lastEvaluationTime` values (whole seconds) give its gaps "
        "(polling alone misses a turn a new model woke shortly before a due one), "
        "start-up included; it is within its interval when every gap, and the time from its "
        "last evaluation to the window's end, is at most the sync period + 10 % (or + 50 %), "
        "rounded up to a whole second. After start-up counts only the gaps that end a period "
        "or more after every object's first evaluation (an operator's restart or failover "
        "evaluates every object afresh, and the first turns read the long history). "
        f"Lateness is the operator's `{LATENESS_GAUGE}` over the objects at the end, "
        f"and {LATE_CONDITION} the share of objects whose condition is True then (n/a: the "
        "operator exports neither). Forecasting is the share whose last status carried a "
        "forecast; all forecasting after, from the operator's launch until the last object's "
        "first forecast. The operator's figures are over the window after every first "
        "evaluation: evaluation duration (from its worker seat on, the wait for a seat not "
        f"included) from `{HISTOGRAM}`, selections "
        f"from `{SELECTION_HISTOGRAM}`, interpolated as `histogram_quantile` does; API "
        f"requests are `{API_COUNTER}` (its own client; kopf's watches are not counted) per "
        "object and sync period. CPU (utime + stime, reaped children's included) and RSS are "
        "those of the operator and every process below it, from /proc every 2 s; peak RSS is "
        "the highest sampled total since the launch (or the operator process's own VmHWM if "
        "higher). The PredictiveScalers are deleted, and the operator stopped, between runs."
    )


def render(
    results: Sequence[LoadResult], options: Options, args: argparse.Namespace, notes: str
) -> str:
    first_mix = [r for r in results if r.mix == results[0].mix]
    largest = first_mix[-1]
    kinds = [[k, f"{v:.2f}"] for k, v in sorted(largest.api_by_kind.items(), key=lambda i: -i[1])]
    return "\n".join(
        [
            "## Operator load: one operator, many PredictiveScalers",
            "",
            f"- Date: {datetime.date.today().isoformat()}; {notes}",
            f"- Machine: {machine_description()}",
            f"- Reproduce: {reproduce(args)}",
            "",
            "### Method",
            "",
            method(results, options, args),
            "",
            *results_tables(results),
            "",
            scaling_curve(results),
            "",
            f"### API requests per object per cycle, {operator_row(largest)['objects']} objects",
            "",
            *(table(("verb resource", "requests"), kinds) if kinds else [f"n/a: no {API_COUNTER}"]),
            "",
        ]
    )
