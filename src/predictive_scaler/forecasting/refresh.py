"""A forecaster that keeps its model selection between calls and redoes it on a schedule."""

from __future__ import annotations

from collections.abc import Sequence

from numpy.typing import ArrayLike

from predictive_scaler.forecasting.auto import Auto, ModelSelection, select_model
from predictive_scaler.forecasting.base import ForecastModel
from predictive_scaler.forecasting.forecast import Forecast
from predictive_scaler.forecasting.hygiene import clean_series
from predictive_scaler.forecasting.registry import make_model

DEFAULT_REFRESH_SECONDS = 3600.0


class ScheduledSelection:
    """Forecast one workload's load, re-selecting and refitting every ``refresh_seconds``.

    A backtest selection (``auto``) costs seconds per workload and a fit tens
    of milliseconds, while updating a fitted model with new values costs
    about a millisecond. So the fitted model is a cache: kept and updated
    until it is ``refresh_seconds`` old (or was selected for a shorter
    horizon), then selected and fitted afresh. Losing it (an operator
    restart) only costs one refresh.
    """

    def __init__(
        self,
        model: str = "auto",
        *,
        refresh_seconds: float = DEFAULT_REFRESH_SECONDS,
        season_length: int | None = None,
        candidates: Sequence[str] | None = None,
    ) -> None:
        if refresh_seconds <= 0:
            raise ValueError(f"refresh_seconds must be > 0, got {refresh_seconds}")
        make_model(model, season_length=season_length)  # fail fast on a bad name
        self.model = model
        self.refresh_seconds = refresh_seconds
        self.season_length = season_length
        self.candidates = None if candidates is None else tuple(candidates)
        self.selection: ModelSelection | None = None
        self.fitted: ForecastModel | None = None
        self.fitted_at: float | None = None
        self.chosen: str | None = None

    def _needs_refresh(self, horizon: int, now: float) -> bool:
        return (
            self.fitted is None
            or self.fitted_at is None
            or now - self.fitted_at >= self.refresh_seconds
            or (self.selection is not None and self.selection.horizon < horizon)
        )

    def forecast(self, values: ArrayLike, horizon: int, level: float, now: float) -> Forecast:
        """Forecast ``horizon`` steps after ``values``; ValueError if no value is usable.

        On refresh the model is selected (``auto``) and fitted; in between it
        is only updated with the new values, keeping its parameters.
        """
        series = clean_series(values)
        if self._needs_refresh(horizon, now):
            if self.model == "auto":
                self.selection = select_model(
                    series,
                    candidates=self.candidates,
                    horizon=horizon,
                    season_length=self.season_length,
                )
                model: ForecastModel = Auto(
                    selection=self.selection, season_length=self.season_length
                )
            else:
                model = make_model(self.model, season_length=self.season_length)
            self.fitted, self.fitted_at = model.fit(series), now
        else:
            assert self.fitted is not None  # checked by _needs_refresh
            self.fitted.update(series)
        self.chosen = self.fitted.chosen_ if isinstance(self.fitted, Auto) else self.model
        return self.fitted.predict(horizon, level)
