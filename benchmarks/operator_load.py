"""Operator load: how one operator keeps up as the number of PredictiveScalers grows.

For each count N, on the local control plane: N one-pod Deployments and N
PredictiveScalers, then one `predictive-scaler run` on them; from its start
and over a few sync periods after every object's first evaluation, how
regularly each object is evaluated, how late, how long evaluations take, the
API requests they cost, and the memory and CPU of the operator and its
worker processes. Every Deployment has days of CPU history, backfilled into
Prometheus, so that the default model (`auto`) selects on real series.

With --mix 0,0.1 every count runs twice: all objects cheap, then a tenth of
them expensive (in a namespace of their own, so that fair queueing can be
seen): `auto` on 3 h of history at 5 s steps, refreshed as often as the CRD
allows, every 2 s.

    python -m benchmarks.operator_load [--counts 10,100,1000] [--model auto|holt]
        [--mix 0,0.1] [--sync-period 60s] [--cycles 3] [--workers 4]
        [--selection-workers 0] [--past 15d]
"""

from __future__ import annotations

import argparse
import functools
import math
import os
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from kubernetes import client

import predictive_scaler_dev.localcluster as local
from benchmarks.operator_load_classes import (
    FIRST_EVALUATION_ALLOWANCE,
    NAMESPACE,
    OPERATOR_SCRAPE_SECONDS,
    SCRAPE_TARGET,
    LoadClass,
    Options,
    cheap_class,
    expensive_class,
)
from benchmarks.operator_load_cluster import (
    create_scalers,
    delete_scalers,
    describe_counts,
    prepare_workloads,
    say,
    scaler_statuses,
)
from benchmarks.operator_load_figures import (
    API_COUNTER,
    HISTOGRAM,
    LATE_CONDITION,
    LATENESS_GAUGE,
    ON_TIME,
    SELECTION_HISTOGRAM,
    ClassResult,
    LoadResult,
    condition_status,
    first_evaluations,
    gaps_and_shares,
    histogram_quantile,
    per_object,
    since,
    spread,
)
from benchmarks.operator_load_observe import Observation, keep_stamps, observe, operator_metrics
from benchmarks.operator_load_report import render, results_tables
from benchmarks.process_tree import cores_used, peak_rss_kib
from benchmarks.report import write_section
from benchmarks.status_watch import StatusWatch
from predictive_scaler.units import parse_duration
from predictive_scaler_dev.demo.interrupts import cleanup_that_finishes, interrupt_on_signals
from predictive_scaler_dev.demo.process import OperatorProcess
from predictive_scaler_dev.demo.session import apply_crds


def run_count(
    cluster: local.LocalCluster, api: client.ApiClient, count: int, mix: float, options: Options
) -> LoadResult:
    custom = client.CustomObjectsApi(api)
    counts = options.counts(count, mix)
    classes = tuple(c for c in options.classes if counts[c.kind])
    namespaces = [c.namespace for c in classes]
    with cleanup_that_finishes() as cleanup:
        env = {
            "PREDICTIVE_SCALER_REBALANCE_MODE": "Off",
            "PREDICTIVE_SCALER_NAMESPACES": ",".join(namespaces),
            # The operator reads only the variables it knows: the old name for its
            # evaluation threads and the new, and the selection processes (0: a core each).
            "PREDICTIVE_SCALER_FORECAST_WORKERS": str(options.workers),
            "PREDICTIVE_SCALER_EVALUATION_WORKERS": str(options.workers),
            "PREDICTIVE_SCALER_SELECTION_WORKERS": str(options.selection_workers),
        }
        log = options.logs / f"operator-{count}-mix-{mix:g}.log"
        operator = OperatorProcess(cluster, NAMESPACE, log, extra_env=env)
        cleanup.callback(cluster.remove_scrape_target, SCRAPE_TARGET)
        cleanup.callback(operator.stop)
        # Registered last, so it runs first: the objects go while the operator still runs.
        cleanup.callback(delete_scalers, custom, operator, namespaces, count)
        creation = create_scalers(custom, classes, counts)
        launched, launched_at = time.monotonic(), time.time()
        operator.start()
        observation = Observation(classes, counts, started=launched_at)
        watches = [
            cleanup.enter_context(
                StatusWatch(custom, c.namespace, functools.partial(observation.record_one, c.kind))
            )
            for c in classes
        ]
        # Scraped as the chart's ServiceMonitor does, not at the compressed cluster's 2 s:
        # at 1,000 objects one exposition is 18,000 lines and took the busy operator 0.9-2 s.
        cluster.add_scrape_target(
            SCRAPE_TARGET,
            f"127.0.0.1:{operator.metrics_port}",
            interval_seconds=OPERATOR_SCRAPE_SECONDS,
        )
        say(f"{describe_counts(counts)} PredictiveScalers; operator pid {operator.pid}, log {log}")
        allowance = sum(
            counts[c.kind] * FIRST_EVALUATION_ALLOWANCE["auto" if c.selects else "fixed"]
            for c in classes
        )
        deadline = time.monotonic() + 120 + allowance
        observe(custom, operator, observation, deadline, observation.all_evaluated)
        waited = time.monotonic() - launched
        if observation.all_evaluated():
            say(f"all evaluated within {waited:.0f} s; measuring {options.cycles} periods")
        else:
            say(
                f"only {observation.evaluated()} of {count} evaluated after {waited:.0f} s; "
                f"measuring {options.cycles} periods anyway"
            )
        result = measure(custom, operator, observation, mix=mix, options=options, creation=creation)
        if relists := sum(w.relists for w in watches):
            say(f"the status watches listed again {relists} times (stamps in between were polled)")
        return result


def measure(
    custom: client.CustomObjectsApi,
    operator: OperatorProcess,
    observation: Observation,
    *,
    mix: float,
    options: Options,
    creation: float,
) -> LoadResult:
    """Keep polling for ``cycles`` of the longest sync period; then the figures."""
    before = operator_metrics(operator)
    window_from = len(observation.samples)
    measured_from = time.time()
    deadline = time.monotonic() + options.window_seconds
    observe(custom, operator, observation, deadline)
    after = operator_metrics(operator)
    # A last list: the window ends when it was asked, so an evaluation after the
    # class's previous poll (a quarter period ago) is not mistaken for a late one.
    ended = time.time()
    for c in observation.classes:
        if observation.counts[c.kind]:
            observation.record(c, scaler_statuses(custom, c.namespace))
    keep_stamps(
        observation, options.logs / f"stamps-{sum(observation.counts.values())}-mix-{mix:g}.json"
    )
    window = {key: value - before.get(key, 0.0) for key, value in after.items()}
    samples = observation.samples[window_from - 1 :]
    elapsed = samples[-1].at - samples[0].at
    lateness = per_object(after, LATENESS_GAUGE)
    classes = tuple(
        class_result(observation, c, (measured_from, ended), lateness if lateness else None)
        for c in observation.classes
    )
    object_cycles = sum(
        observation.counts[c.kind] * elapsed / c.sync_seconds for c in observation.classes
    )
    by_kind = {
        f"{dict(labels).get('verb')} {dict(labels).get('resource')}": value / object_cycles
        for (name, labels), value in window.items()
        if name == API_COUNTER
    }
    selections = window.get((f"{SELECTION_HISTOGRAM}_count", frozenset()))
    return LoadResult(
        objects=sum(observation.counts.values()),
        mix=mix,
        classes=classes,
        creation_seconds=creation,
        # From the evaluation stamps, as each class's, not from when a poll saw them.
        first_evaluation_seconds=max(c.first_evaluation[1] for c in classes),
        evaluations=int(window.get((f"{HISTOGRAM}_count", frozenset()), 0)),
        evaluation_seconds=tuple(
            histogram_quantile(window, f"{HISTOGRAM}_bucket", q) for q in (0.5, 0.95, 0.99)
        ),
        selections=None if selections is None else int(selections),
        selection_cpu_p50=histogram_quantile(window, f"{SELECTION_HISTOGRAM}_bucket", 0.5),
        api_by_kind=by_kind,
        peak_rss_mib=peak_rss_kib(observation.samples) / 1024,
        mean_rss_mib=float(np.mean([s.rss_kib for s in samples])) / 1024,
        cpu_cores=cores_used(samples),
        processes=max(s.processes for s in observation.samples),
    )


def class_result(
    observation: Observation,
    load_class: LoadClass,
    measured: tuple[float, float],
    lateness: Mapping[tuple[str, str], float] | None,
) -> ClassResult:
    """``measured``: from when every object had a first evaluation to the end (epoch)."""
    kind, started = load_class.kind, observation.started
    (measured_from, ended) = measured
    names = load_class.names(observation.counts[kind])
    seen, statuses = observation.seen[kind], observation.statuses[kind]
    limits = [load_class.sync_seconds * factor for factor in ON_TIME]
    gaps, within = gaps_and_shares(seen, names, (started, ended), limits)
    steady_from = measured_from + load_class.sync_seconds
    _, steady_within = gaps_and_shares(
        since(seen, steady_from), names, (steady_from, ended), limits
    )
    late_values = (
        None
        if lateness is None
        else [
            lateness[(load_class.namespace, n)]
            for n in names
            if (load_class.namespace, n) in lateness
        ]
    )
    reported = [condition_status(statuses.get(n, {}), LATE_CONDITION) for n in names]
    # Without the lateness gauge an absent condition means an operator that has none;
    # with it, an object not (yet) late.
    late = (
        None
        if lateness is None and not any(reported)
        else sum(r == "True" for r in reported) / len(names)
    )
    forecast_at = observation.first_forecast[kind]
    return ClassResult(
        kind=kind,
        objects=len(names),
        sync_seconds=load_class.sync_seconds,
        first_evaluation=first_evaluations(seen, names, started),
        within=tuple(within),
        steady_within=tuple(steady_within),
        gap_seconds=spread(gaps),
        lateness_seconds=None if late_values is None else spread(late_values),
        late=late,
        forecasting=sum("forecast" in statuses.get(n, {}) for n in names) / len(names),
        all_forecasting_after=(
            max(forecast_at[n] for n in names) - started
            if all(n in forecast_at for n in names)
            else math.nan
        ),
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--counts", default="10,100,1000", help="object counts, commas")
    parser.add_argument(
        "--model",
        choices=("auto", "holt"),
        default="auto",
        help="auto: the CRD's default forecast settings; holt: 10m of history at 30s steps",
    )
    parser.add_argument(
        "--mix",
        default="0",
        help="shares of expensive objects, commas: each count runs at each (e.g. 0,0.1)",
    )
    parser.add_argument("--sync-period", default="60s", help="spec.syncPeriod of the cheap ones")
    parser.add_argument(
        "--cycles", type=int, default=3, help="sync periods measured after the first evaluations"
    )
    parser.add_argument("--workers", type=int, default=4, help="the operator's evaluation threads")
    parser.add_argument(
        "--selection-workers",
        type=int,
        default=0,
        help="the operator's selection processes (0: its default, one per core)",
    )
    parser.add_argument("--past", default="15d", help="CPU history backfilled per Deployment")
    parser.add_argument("--output", type=Path, default=Path("BENCHMARKS.md"))
    args = parser.parse_args(argv)
    try:
        counts = sorted(int(count) for count in args.counts.split(","))
        mixes = tuple(float(mix) for mix in args.mix.split(","))
        parse_duration(args.sync_period)
        past = parse_duration(args.past)
    except ValueError as error:
        parser.error(str(error))
    if not all(0.0 <= mix < 1.0 for mix in mixes):
        parser.error(f"--mix: every share must lie in [0, 1), got {args.mix}")
    options = Options(
        classes=(cheap_class(args.model, args.sync_period), expensive_class()),
        mixes=mixes,
        cycles=args.cycles,
        workers=args.workers,
        selection_workers=args.selection_workers,
        past=args.past,
        logs=Path(tempfile.mkdtemp(prefix="operator-load-")),
    )
    largest = options.largest(counts)
    used = [c for c in options.classes if largest[c.kind]]
    if past < max(parse_duration(c.settings.history) for c in used):
        parser.error(f"--past {args.past} is shorter than the history forecast on")
    load_before, began = os.getloadavg()[0], time.perf_counter()
    results: list[LoadResult] = []
    restore_sigterm = interrupt_on_signals()
    try:
        with cleanup_that_finishes() as cleanup:
            started = local.up()
            if not started.reused:
                cleanup.callback(local.down, started.cluster.run_dir)
            say(
                f"local cluster {'reused' if started.reused else 'started'}; logs in {options.logs}"
            )
            api = cleanup.enter_context(started.cluster.api())
            apply_crds(started.cluster)
            prepare_workloads(started.cluster, api, largest, options, cleanup)
            for mix in mixes:
                for count in counts:
                    results.append(run_count(started.cluster, api, count, mix, options))
                    print("\n".join(results_tables(results[-1:])), flush=True)
    finally:
        restore_sigterm()
    minutes = (time.perf_counter() - began) / 60
    notes = f"the run took {minutes:.1f} min; load average {load_before:.2f} before, "
    section = render(results, options, args, notes + f"{os.getloadavg()[0]:.2f} after")
    print(section)
    write_section(args.output, "operator-load", section)


if __name__ == "__main__":
    main()
