"""What ``predictive-scaler backtest`` reports: one JSON object (``--json``), or text."""

from __future__ import annotations

from collections import Counter
from typing import Any

from pydantic import BaseModel, ConfigDict

from predictive_scaler.scaling.budget import HIGHEST
from predictive_scaler.simulation import BacktestResult, Outcome, ReplayResult
from predictive_scaler.simulation.backtest import MATCH_HPA
from predictive_scaler.simulation.forecasts import CLAIRVOYANT, CLAIRVOYANT_STEPS
from predictive_scaler.simulation.hindsight import HINDSIGHT

POLICIES = ("predictive", "hpa", "oracle")


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class ElasticityReport(Frozen):
    """The SPEC RG elasticity metrics (Herbst et al., TOMPECS 2018), in percent."""

    under_accuracy: float
    over_accuracy: float
    under_timeshare: float
    over_timeshare: float
    instability: float


class OutcomeReport(Frozen):
    overload_minutes: float
    replica_minutes: float
    scaling_actions: int
    unserved: float
    elasticity: ElasticityReport

    @classmethod
    def of(cls, outcome: Outcome) -> OutcomeReport:
        return cls(**_fields(outcome))


def _fields(outcome: Outcome) -> dict[str, Any]:
    return {
        **vars(outcome),
        "elasticity": ElasticityReport(**outcome.elasticity.metrics()),
    }


class SweepPoint(OutcomeReport):
    utilisation: float
    overload_budget: float | None = None
    # With a budget: of its overload minutes, those beyond the threshold's ceiling.
    beyond_ceiling_minutes: float | None = None


class BudgetReport(Frozen):
    """The overload budget the predictive policy steered to, and the share it realised."""

    budget: float
    matched_to_hpa: bool
    realised: float
    hpa_realised: float
    # Predictive overload minutes whose load lay beyond what the threshold's
    # ceiling provisions: load no forecast saw coming, that no budget buys off.
    beyond_ceiling_minutes: float


class MatchedReport(Frozen):
    """Reductions against hpa at U = target (0.3 = 30 % fewer); null when they do not exist."""

    overload_reduction_at_hpa_cost: float | None
    cost_reduction_at_hpa_overload: float | None
    overload_minutes_at_hpa_cost: float | None
    replica_minutes_at_hpa_overload: float | None
    notes: list[str]


class BacktestReport(Frozen):
    """What ``predictive-scaler backtest --json`` prints: one JSON object."""

    trace: str
    column: str
    step_seconds: float
    steps: int
    scored_steps: int
    capacity_per_replica: float
    startup_steps: int
    target_utilisation: float
    interval: float
    model: str
    policies: dict[str, OutcomeReport]
    matched: MatchedReport
    # Cost of a policy over the oracle's at the target, and at 100 % utilisation.
    cost_over_oracle: dict[str, float]
    cost_over_oracle_at_full_utilisation: dict[str, float]
    oracle_at_full_utilisation: OutcomeReport
    sweeps: dict[str, list[SweepPoint]]
    chosen_models: dict[str, int]
    overload_budget: BudgetReport | None = None
    # With --when-worse-than-reactive FollowHPA: the scored steps at the shadow HPA's count.
    followed_hpa_steps: int | None = None
    # What in the trace itself bends the figures (glitches, what the forecasts read as 0).
    notes: list[str]
    # The predictive policy, as chosen, on forecasts no one can run (simulation.backtest's
    # REFERENCES): how much a better forecast could still buy on this load.
    references: dict[str, OutcomeReport] = {}


def report(
    result: BacktestResult, source: str, column: str, steps: int, notes: list[str]
) -> BacktestReport:
    policies = {name: OutcomeReport.of(result.policies[name].outcome) for name in POLICIES}
    oracle_full = result.policies["oracle_at_full_utilisation"].outcome
    matched = result.matched
    return BacktestReport(
        trace=source,
        column=column,
        step_seconds=result.config.step_seconds,
        steps=steps,
        scored_steps=steps - result.config.start,
        capacity_per_replica=result.config.capacity,
        startup_steps=result.config.startup_steps,
        target_utilisation=result.settings.target,
        interval=result.settings.interval,
        model=result.settings.model,
        policies=policies,
        matched=MatchedReport(
            overload_reduction_at_hpa_cost=matched.overload_reduction_at_baseline_cost,
            cost_reduction_at_hpa_overload=matched.cost_reduction_at_baseline_overload,
            overload_minutes_at_hpa_cost=matched.overload_at_baseline_cost,
            replica_minutes_at_hpa_overload=matched.cost_at_baseline_overload,
            notes=list(matched.notes),
        ),
        cost_over_oracle={
            name: policies[name].replica_minutes / policies["oracle"].replica_minutes
            for name in ("predictive", "hpa")
        },
        cost_over_oracle_at_full_utilisation={
            name: policies[name].replica_minutes / oracle_full.replica_minutes
            for name in ("predictive", "hpa", "oracle")
        },
        oracle_at_full_utilisation=OutcomeReport.of(oracle_full),
        sweeps={
            "predictive": [
                sweep_point(r, beyond)
                for r, beyond in zip(
                    result.predictive_sweep, predictive_beyond_ceiling(result), strict=True
                )
            ],
            "hpa": [sweep_point(r) for r in result.baseline_sweep],
        },
        chosen_models=dict(Counter(result.table.models).most_common()),
        overload_budget=None
        if result.budget is None
        else BudgetReport(
            budget=result.budget,
            matched_to_hpa=result.settings.overload_budget == MATCH_HPA,
            realised=result.overload_share("predictive"),
            hpa_realised=result.overload_share("hpa"),
            beyond_ceiling_minutes=result.beyond_ceiling_minutes,
        ),
        followed_hpa_steps=result.followed_steps,
        notes=notes,
        references={
            name: OutcomeReport.of(replayed.outcome) for name, replayed in result.references.items()
        },
    )


def predictive_beyond_ceiling(result: BacktestResult) -> tuple[float | None, ...]:
    """Each predictive sweep point's minutes beyond the ceiling; None without a budget."""
    if result.budget is None:
        return (None,) * len(result.predictive_sweep)
    return result.sweep_beyond_ceiling_minutes


def sweep_point(result: ReplayResult, beyond_ceiling_minutes: float | None = None) -> SweepPoint:
    return SweepPoint(
        utilisation=result.utilisation,
        overload_budget=result.budget,
        beyond_ceiling_minutes=beyond_ceiling_minutes,
        **_fields(result.outcome),
    )


def percent(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.1%}".replace("+", "")


def render(report: BacktestReport) -> str:
    minutes = report.step_seconds / 60.0
    lines = [
        f"{report.trace} [{report.column}]: {report.steps} steps of {report.step_seconds:g}s, "
        f"{report.scored_steps} scored ({report.scored_steps * minutes:.0f} min)",
        f"capacity {report.capacity_per_replica:.4g} per replica per step (p99.9 / 20), "
        f"start-up {report.startup_steps} steps, target utilisation {report.target_utilisation:g}, "
        f"model {report.model}, interval {report.interval:.0%}",
        "",
        f"{'policy':<12} {'overload min':>13} {'replica-min':>12} {'actions':>8} "
        f"{'unserved':>12} {'cost/oracle':>12} {'cost/oracle@100%':>17}",
    ]
    full = report.cost_over_oracle_at_full_utilisation
    for name, outcome in [*report.policies.items()]:
        over_oracle = report.cost_over_oracle.get(name, 1.0)
        lines.append(
            f"{name:<12} {outcome.overload_minutes:>13.0f} {outcome.replica_minutes:>12.0f} "
            f"{outcome.scaling_actions:>8} {outcome.unserved:>12.4g} {over_oracle:>12.2f} "
            f"{full[name]:>17.2f}"
        )
    lines += [
        "",
        "elasticity (SPEC RG, Herbst et al. 2018; % of demand, % of time; demand = replicas "
        "the load needs at 100 %, supply = ready replicas):",
        f"{'policy':<12} {'under acc.':>11} {'over acc.':>10} {'under time':>11} "
        f"{'over time':>10} {'instability':>12}",
    ]
    for name, outcome in report.policies.items():
        scored = outcome.elasticity
        lines.append(
            f"{name:<12} {scored.under_accuracy:>10.1f}% {scored.over_accuracy:>9.1f}% "
            f"{scored.under_timeshare:>10.1f}% {scored.over_timeshare:>9.1f}% "
            f"{scored.instability:>11.1f}%"
        )
    budget = report.overload_budget
    if budget is not None:
        predictive = report.policies["predictive"]
        source = " (hpa's share)" if budget.matched_to_hpa else ""
        lines += [
            "",
            f"overload budget {budget.budget:.3%}{source}: predictive overloaded "
            f"{budget.realised:.3%} of the time ({budget.realised / budget.budget:.2f}x the "
            f"budget), hpa {budget.hpa_realised:.3%}",
            f"  {budget.beyond_ceiling_minutes:.0f} of its {predictive.overload_minutes:.0f} "
            f"overload minutes came above what the highest threshold ({HIGHEST:g} forecast "
            "spreads) provisions: load the forecast did not see coming, which no budget "
            "buys off",
        ]
    if report.followed_hpa_steps is not None:
        lines += [
            "",
            f"FollowHPA: predictive followed the shadow HPA's count for "
            f"{report.followed_hpa_steps} of {report.scored_steps} steps (while it lost to it "
            "on both overload and replica-minutes over the judged window)",
        ]
    matched = report.matched
    swept = "overload budget" if budget is not None else "headroom"
    lines += [
        "",
        f"matched against hpa at the target utilisation (sweeping the predictive {swept}):",
        f"  overload minutes at hpa's cost:   {percent(matched.overload_reduction_at_hpa_cost)} "
        "fewer",
        f"  replica-minutes at hpa's overload: {percent(matched.cost_reduction_at_hpa_overload)} "
        "fewer",
    ]
    lines += [f"  note: {note}" for note in matched.notes]
    lines += references(report)
    models = ", ".join(f"{name} {count}" for name, count in report.chosen_models.items())
    lines += ["", f"models used (steps): {models}"]
    lines += [f"note: {note}" for note in report.notes]
    return "\n".join(lines)


REFERENCE_WORDS = {
    "predictive": "the operator's own forecasts, as above",
    HINDSIGHT: "least squares of the load's recent samples (and the same time a day "
    "before, with a day behind), fitted on this trace itself",
    CLAIRVOYANT: f"the load's course read from the future, its mean over {CLAIRVOYANT_STEPS} steps",
}


def references(report: BacktestReport) -> list[str]:
    """The lines on what the policy did with forecasts no one can run; none without them."""
    if not report.references:
        return []
    hpa = report.policies["hpa"].replica_minutes
    lines = [
        "",
        "the same policy and budget on forecasts no one can run, to show how far a better "
        "forecast could go on this load:",
    ]
    for name, outcome in {"predictive": report.policies["predictive"], **report.references}.items():
        lines.append(
            f"  {name:<12} {outcome.overload_minutes:>6.0f} overload min "
            f"{outcome.replica_minutes:>10.0f} replica-min "
            f"({percent(1.0 - outcome.replica_minutes / hpa)} fewer than hpa): "
            f"{REFERENCE_WORDS.get(name, name)}"
        )
    return lines
