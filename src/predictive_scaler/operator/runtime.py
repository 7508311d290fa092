"""What the operator keeps in memory per object: the fitted forecaster and the histories.

Both are caches. Losing them (a restart) costs one model selection and one
full read of each history; everything a decision needs lives in the
object's status.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from predictive_scaler.forecasting import ScheduledSelection
from predictive_scaler.forecasting.handover import Submit
from predictive_scaler.forecasting.refresh_job import (
    DEFAULT_SELECTION_BUDGET_SECONDS,
    RefreshRequest,
)
from predictive_scaler.operator.histories import CachedHistory
from predictive_scaler.operator.resource import ForecastSettings
from predictive_scaler.operator.sources import LoadSeries
from predictive_scaler.units import parse_duration


def _new_selection(
    settings: ForecastSettings, submit: Submit | None, budget_seconds: float
) -> ScheduledSelection:
    models = settings.models
    if len(models) == 1:
        model, candidates = models[0], None
    else:
        # Several names: select by backtest among exactly those.
        model, candidates = "auto", [m for m in models if m != "auto"]
    return ScheduledSelection(
        model,
        refresh_seconds=parse_duration(settings.refresh),
        season_length=settings.season_length,
        candidates=candidates,
        seasonality_seconds=settings.seasonality_seconds,
        budget_seconds=budget_seconds,
        submit=submit,
    )


@dataclass
class ObjectRuntime:
    # Where selections go: None runs them in the evaluation itself.
    submit: Submit | None = field(default=None, repr=False)
    selection_budget: float = DEFAULT_SELECTION_BUDGET_SECONDS
    # What the cached selection was made for: its settings and the series it forecasts.
    key: tuple[ForecastSettings, LoadSeries] | None = None
    selection: ScheduledSelection | None = field(default=None, repr=False)
    # Guards the object's metrics (metrics.publishing); None: unguarded (not a daemon's).
    metrics_token: int | None = None
    recent: CachedHistory = field(default_factory=CachedHistory, repr=False)
    long: CachedHistory = field(default_factory=CachedHistory, repr=False)

    def wants(self, request: RefreshRequest) -> bool:
        """Whether a selection queued for this object is still awaited by its forecaster."""
        return self.selection is None or self.selection.handover.wants(request)

    def selection_for(self, settings: ForecastSettings, series: LoadSeries) -> ScheduledSelection:
        """The cached selection, rebuilt when the forecast settings or the series changed.

        A model fitted on another series (a new query, the other resource, another
        target) forecasts in that series' units until its next refresh, an hour by
        default: a request rate of 200 read as cores asked for hundreds of replicas.
        The pods' selector is left out: the same workload's pods are the same series.
        """
        key = (settings, replace(series, pod_selector=""))
        if self.selection is None or self.key != key:
            selection = _new_selection(settings, self.submit, self.selection_budget)
            self.selection, self.key = selection, key
        return self.selection
