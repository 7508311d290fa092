"""The demo's figures: the operator, the real HPA and KEDA as measured, and the HPA replayed.

All use the replay model's definitions (design.md §5), in trace minutes: a
moment is overloaded when the load exceeds what the Running replicas serve at
100 %, and replica-minutes count every replica the Deployment asked for,
starting ones included. The operator, the real HPA controller and KEDA are
judged tick by tick on what really happened in the cluster, each on its own
Deployment under the same load; the baseline, the same HPA algorithm and
behavior, is replayed on the per-step load as every backtest replays it, so
the gap between the two HPAs is what the replay model leaves out.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.scaling import DEFAULT_BEHAVIOR
from predictive_scaler.simulation import Outcome, ReplayResult, replay
from predictive_scaler.simulation.elasticity import METRICS, demand, elasticity
from predictive_scaler.simulation.hpa import HpaPolicy
from predictive_scaler.simulation.replay import overloaded as overloaded_steps
from predictive_scaler_dev.demo.load import Tick
from predictive_scaler_dev.demo.scenario import Scenario


@dataclass(frozen=True)
class DemoSummary:
    operator: Outcome
    baseline: Outcome
    operator_peak_replicas: int
    baseline_peak_replicas: int
    trace_minutes: float
    hpa: Outcome  # the real HPA controller, measured in the cluster
    hpa_peak_replicas: int
    # How often metrics-server reads usage, and so how old the real HPA's
    # metric can be, in trace minutes; the replayed HPA sees each step at once.
    metric_resolution_seconds: float
    hpa_metric_age_minutes: float
    keda: Outcome  # KEDA's Prometheus scaler, measured in the cluster
    keda_peak_replicas: int


def measured(ticks: Sequence[Tick], scenario: Scenario) -> Outcome:
    """The operator's figures from the driver's ticks, each weighted by the time it covers.

    Scored after the warm-up, from the step the baseline's replay starts at.
    """
    scored_from = scenario.replay_config().start * scenario.seconds_per_step
    scored = [t for t in ticks if t.seconds >= scored_from]
    if not scored:
        return Outcome(0.0, 0.0, 0, 0.0)
    seconds = np.array([t.seconds for t in scored])
    ends = np.append(seconds[1:], scenario.duration_seconds)
    wall = np.clip(ends - seconds, 0.0, None)
    trace_minutes = wall * scenario.compression / 60.0
    load = np.array([t.load for t in scored])
    running = np.array([t.running for t in scored])
    replicas = np.array([t.replicas for t in scored])
    shortfall = load - running * scenario.capacity_cores
    overloaded = overloaded_steps(load, running, scenario.capacity_cores)
    previous = np.array([t.replicas for t in ticks if t.seconds < scored_from][-1:])
    changes = np.diff(np.concatenate((previous, replicas)))
    return Outcome(
        overload_minutes=float(trace_minutes[overloaded].sum()),
        replica_minutes=float((replicas * trace_minutes).sum()),
        scaling_actions=int(np.count_nonzero(changes)),
        # In load per step, as the replay counts it: a tick is a fraction of a step.
        unserved=float((shortfall * wall)[overloaded].sum() / scenario.seconds_per_step),
        elasticity=elasticity(demand(load, scenario.capacity_cores), running, trace_minutes * 60),
    )


def summary_json(summary: DemoSummary) -> dict[str, Any]:
    """``summary.json``: the figures, each side's elasticity metrics in percent."""
    figures = dataclasses.asdict(summary)
    for side, value in vars(summary).items():
        if isinstance(value, Outcome):
            figures[side]["elasticity"] = value.elasticity.metrics()
    return figures


def baseline(load: FloatArray, scenario: Scenario) -> ReplayResult:
    """The reactive HPA replayed on the same load, with the same start-up delay and start.

    With the default behavior, as the demo's real HPA states it (in trace time
    here, compressed there): without one it would take the legacy path.
    """
    config = scenario.replay_config()
    policy = HpaPolicy(config, scenario.target_utilisation, behavior=DEFAULT_BEHAVIOR)
    return replay(load, policy, config)


def summarise(
    ticks: Sequence[Tick],
    hpa_ticks: Sequence[Tick],
    keda_ticks: Sequence[Tick],
    load: FloatArray,
    scenario: Scenario,
    *,
    metric_resolution_seconds: float,
) -> DemoSummary:
    reactive = baseline(load, scenario)
    return DemoSummary(
        operator=measured(ticks, scenario),
        baseline=reactive.outcome,
        operator_peak_replicas=max((t.replicas for t in ticks), default=0),
        baseline_peak_replicas=int(reactive.replicas.max()),
        trace_minutes=(load.size - scenario.replay_config().start) * scenario.step_minutes,
        hpa=measured(hpa_ticks, scenario),
        hpa_peak_replicas=max((t.replicas for t in hpa_ticks), default=0),
        metric_resolution_seconds=metric_resolution_seconds,
        hpa_metric_age_minutes=metric_resolution_seconds * scenario.compression / 60,
        keda=measured(keda_ticks, scenario),
        keda_peak_replicas=max((t.replicas for t in keda_ticks), default=0),
    )


def _change(ours: float, theirs: float) -> str:
    return f"{(ours / theirs - 1) * 100:+.0f} %" if theirs > 0 else "n/a"


def table(summary: DemoSummary) -> list[str]:
    rows = [
        ("predictive-scaler (measured)", summary.operator, summary.operator_peak_replicas),
        ("HPA controller (measured)", summary.hpa, summary.hpa_peak_replicas),
        ("KEDA, Prometheus (measured)", summary.keda, summary.keda_peak_replicas),
        ("reactive HPA (replayed)", summary.baseline, summary.baseline_peak_replicas),
    ]
    lines = [
        f"{'':30}{'overload min':>14}{'replica-min':>13}{'scale actions':>15}{'peak':>6}",
    ]
    for name, outcome, peak in rows:
        lines.append(
            f"{name:30}{outcome.overload_minutes:>14.0f}{outcome.replica_minutes:>13,.0f}"
            f"{outcome.scaling_actions:>15d}{peak:>6d}"
        )
    lines += [
        "",
        "elasticity (SPEC RG, in %): under-/over-provisioning accuracy (of demand) and",
        "timeshare (of time), and instability",
        f"{'':30}{'under':>9}{'over':>9}{'under':>9}{'over':>9}{'instab-':>9}",
        f"{'':30}{'accuracy':>9}{'accuracy':>9}{'time':>9}{'time':>9}{'ility':>9}",
    ]
    for name, outcome, _ in rows:
        metrics = outcome.elasticity.metrics()
        lines.append(f"{name:30}" + "".join(f"{metrics[m]:>9.1f}" for m in METRICS))
    real, replayed = summary.hpa, summary.baseline
    lines += [
        "",
        f"replayed HPA against the real one: replica-minutes "
        f"{_change(replayed.replica_minutes, real.replica_minutes)}, overload minutes "
        f"{replayed.overload_minutes:.0f} against {real.overload_minutes:.0f}.",
        f"The real HPA reads metrics-server, whose usage can be "
        f"{summary.hpa_metric_age_minutes:.0f} trace minutes old here (it reads",
        f"every {summary.metric_resolution_seconds:g} s at the fastest, and the replay "
        "compresses time); the replayed HPA",
        "sees each step's load at once, as in every backtest. KEDA's HPA reads the operator's",
        "own Prometheus query, as fresh as a scrape.",
    ]
    return lines
