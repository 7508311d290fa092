"""The scaling benchmarks' table rows: each figure against issue 17's targets."""

from __future__ import annotations

from benchmarks.scaling_replay import Replayed, Row, Source
from predictive_scaler.simulation import compare
from predictive_scaler.simulation.cadence import VARIANTS

# Targets from issue 17, against the HPA at U = 0.7.
OUT_OF_THE_BOX_SAVING = 0.15
MATCHED_SAVING = 0.25
MATCHED_OVERLOAD_REDUCTION = 0.60
KEPT_BUDGETS = (0.005, 0.01, 0.02)
BUDGET_FACTOR = 1.5


def fmt_percent(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def verdict(met: bool | None) -> str:
    return "n/a" if met is None else "met" if met else "**not met**"


def saving(cost: float, baseline: float) -> float:
    return 1.0 - cost / baseline


def reference_saving(row: Row, source: Source) -> str:
    """What the policy saved on ``source``'s forecasts out of the box, and its overload."""
    hpa = row.auto.policies["hpa"]
    predictive = row.by_source[source].policies["predictive"]
    return (
        f"{saving(predictive.replica_minutes, hpa.replica_minutes):.1%} "
        f"({predictive.overload_minutes:.0f} overload min)"
    )


def out_of_the_box_row(row: Row) -> list[str]:
    replayed = row.auto
    hpa, predictive = replayed.policies["hpa"], replayed.policies["predictive"]
    full = replayed.policies["oracle_at_full_utilisation"]
    minutes = replayed.scored_minutes
    cheaper = saving(predictive.replica_minutes, hpa.replica_minutes)
    met = predictive.overload_minutes <= hpa.overload_minutes and cheaper >= OUT_OF_THE_BOX_SAVING
    captured = (hpa.replica_minutes - predictive.replica_minutes) / (
        hpa.replica_minutes - full.replica_minutes
    )
    return [
        row.label,
        row.setting,
        f"{hpa.overload_minutes:.0f} ({hpa.overload_minutes / minutes:.2%})",
        f"{hpa.replica_minutes:.0f}",
        f"{predictive.overload_minutes:.0f} ({predictive.overload_minutes / minutes:.2%})",
        f"{replayed.beyond_ceiling_minutes:.0f}",
        f"{predictive.replica_minutes:.0f}",
        f"{cheaper:.1%} ({verdict(met)})",
        f"{predictive.replica_minutes / full.replica_minutes:.2f}",
        f"{hpa.replica_minutes / full.replica_minutes:.2f}",
        f"{captured:.0%}",
        reference_saving(row, Source.HINDSIGHT),
        reference_saving(row, Source.CLAIRVOYANT),
    ]


def sizing_row(row: Row) -> list[str]:
    """Mean replicas per scored step along ``scaling.decide``'s own steps, and the others'."""
    replayed, clairvoyant = row.auto, row.by_source[Source.CLAIRVOYANT]

    def held(policy: str, of: Replayed = replayed) -> str:
        return f"{of.policies[policy].replica_minutes / of.scored_minutes:.2f}"

    def steps(of: Replayed) -> list[str]:
        means = of.sizing.means()
        return ["n/a"] * 4 if means is None else [f"{value:.2f}" for value in means]

    forecast, sized_for, whole, asked = steps(replayed)
    knowing = steps(clairvoyant)
    return [
        row.label,
        row.setting,
        forecast,
        sized_for,
        whole,
        asked,
        held("predictive"),
        held("hpa"),
        held("oracle_at_full_utilisation"),
        f"{knowing[1]} / {knowing[3]} / {held('predictive', clairvoyant)}",
    ]


def sizing_header() -> list[str]:
    return [
        "trace",
        "start-up",
        "forecast mean when new pods are ready",
        "sized for (budget's threshold; horizon's peak on a scale-down)",
        "in whole replicas",
        "asked for (reactive floor, scale-down window, limits)",
        "predictive: replicas held",
        "hpa: replicas held",
        "oracle@100%: replicas held",
        "clairvoyant forecast: sized for / asked for / held",
    ]


def matched_row(row: Row) -> list[str]:
    replayed = row.auto
    hpa = replayed.policies["hpa"]
    matched = compare(replayed.budget_sweep, hpa)
    references = [
        compare(row.by_source[source].budget_sweep, hpa).cost_reduction_at_baseline_overload
        for source in (Source.HINDSIGHT, Source.CLAIRVOYANT)
    ]
    overload = matched.overload_reduction_at_baseline_cost
    cost = matched.cost_reduction_at_baseline_overload
    kept = []
    for budget in KEPT_BUDGETS:
        index = replayed.budgets.index(budget)
        factor = replayed.budget_sweep[index].overload_minutes / replayed.scored_minutes / budget
        beyond = replayed.sweep_beyond_ceiling_minutes[index] / replayed.scored_minutes / budget
        within = 1 / BUDGET_FACTOR <= factor <= BUDGET_FACTOR
        kept.append(f"{factor:.2f}x ({beyond:.2f}x){'' if within else ' (**not met**)'}")
    overload_applies = hpa.overload_minutes > 0
    return [
        row.label,
        row.setting,
        f"{fmt_percent(cost)} fewer ({verdict(None if cost is None else cost >= MATCHED_SAVING)})",
        f"{fmt_percent(overload)} fewer ("
        + verdict(
            (overload is not None and overload >= MATCHED_OVERLOAD_REDUCTION)
            if overload_applies
            else None
        )
        + ")",
        *kept,
        *(f"{fmt_percent(reference)} fewer" for reference in references),
    ]


ELASTICITY_POLICIES = ("hpa", "predictive", "oracle")


def variants_row(row: Row) -> list[str]:
    """The HPA baseline four ways: overload min / replica-min, the change against the first."""
    variants = row.hpa_variants
    baseline = variants[VARIANTS[0]]
    cells = [row.label, row.setting]
    for name in VARIANTS:
        outcome = variants[name]
        more = outcome.replica_minutes / baseline.replica_minutes - 1
        change = "" if name == VARIANTS[0] else f" ({more:+.1%})"
        cells.append(f"{outcome.overload_minutes:.0f} / {outcome.replica_minutes:.0f}{change}")
    return cells


def elasticity_rows(row: Row) -> list[list[str]]:
    """Each policy's SPEC RG elasticity metrics, in percent."""
    return [
        [
            row.label,
            row.setting,
            name,
            *(f"{v:.1f}" for v in row.auto.policies[name].elasticity.metrics().values()),
        ]
        for name in ELASTICITY_POLICIES
    ]


def box_header() -> list[str]:
    return [
        "trace",
        "start-up",
        "hpa overload min (share)",
        "hpa replica-min",
        "predictive overload min (share)",
        "of which beyond the threshold's ceiling (min)",
        "predictive replica-min",
        f"fewer replica-min (target >= {OUT_OF_THE_BOX_SAVING:.0%}, overload <= hpa)",
        "predictive / oracle@100%",
        "hpa / oracle@100%",
        "saving captured",
        "hindsight forecast: fewer replica-min (its overload)",
        "clairvoyant forecast: fewer replica-min (its overload)",
    ]


def matched_header() -> list[str]:
    return [
        "trace",
        "start-up",
        f"replica-min at hpa's overload (target >= {MATCHED_SAVING:.0%})",
        f"overload min at hpa's cost (target >= {MATCHED_OVERLOAD_REDUCTION:.0%})",
        *(f"realised / budget {b:.1%} (of it beyond the ceiling)" for b in KEPT_BUDGETS),
        "hindsight forecast: replica-min at hpa's overload",
        "clairvoyant forecast: replica-min at hpa's overload",
    ]
