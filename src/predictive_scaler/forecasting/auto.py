"""``auto``: choose, per series, the model that backtests best, with a fallback order."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from predictive_scaler.forecasting.backtest import backtest_errors, rolling_origins
from predictive_scaler.forecasting.base import ForecastModel, random_walk_scale
from predictive_scaler.forecasting.catalog import BASE_MODELS, make_base_model
from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.forecasting.metrics import (
    DEFAULT_UNDER_WEIGHT,
    naive_scale,
    weighted_error,
)
from predictive_scaler.forecasting.models.baseline import Naive
from predictive_scaler.forecasting.seasonal import SUFFIX

DEFAULT_CANDIDATES = tuple(BASE_MODELS)
# Models that also compete on the STL-adjusted series when a season is known.
SEASONAL_VARIANTS = ("brown", "holt", "arima")
# A forecast more than this many times the history's peak is taken as a broken model.
ABSURD_GROWTH = 10.0


@dataclass(frozen=True)
class RankedModel:
    """A candidate's backtest score and errors (actual - forecast), one row per origin."""

    name: str
    score: float
    errors: FloatArray
    template: ForecastModel = field(repr=False, compare=False)


@dataclass(frozen=True)
class ModelSelection:
    """What a backtest decided: candidates best first, and the ones that failed, with why.

    Selection is the expensive part of ``auto``; callers keep this value and
    pass it back as ``Auto(selection=...)`` to refit on new data without
    re-running the backtest until they choose to refresh it.
    """

    ranking: tuple[RankedModel, ...]
    failures: tuple[tuple[str, str], ...]
    horizon: int
    origins: int

    @property
    def scores(self) -> dict[str, float]:
        failed = {name: float("inf") for name, _ in self.failures}
        return {**{ranked.name: ranked.score for ranked in self.ranking}, **failed}


def candidate_names(
    candidates: Sequence[str] | None, season_length: int | None, n: int
) -> list[str]:
    names = list(candidates or DEFAULT_CANDIDATES)
    # The STL wrapper needs two seasons before the earliest origin, or it
    # would only repeat its plain model.
    if candidates is None and season_length and n >= 2 * season_length:
        names += [name + SUFFIX for name in SEASONAL_VARIANTS]
    return names


def select_model(
    y: FloatArray,
    *,
    candidates: Sequence[str] | None = None,
    horizon: int = 5,
    n_origins: int = 16,
    season_length: int | None = None,
    under_weight: float = DEFAULT_UNDER_WEIGHT,
) -> ModelSelection:
    """Rank candidates by rolling-origin backtest over the recent half of the series.

    A model that searches its structure (ARIMA's order) searches once, on
    the history before the earliest origin, and keeps that structure at
    every origin: no look-ahead, and a fraction of the cost.
    """
    min_train = max(10, y.size // 2)
    origins = rolling_origins(y.size, horizon, n_origins, min_train)
    if not origins:
        return ModelSelection((), (("*", f"{y.size} points are too few to backtest"),), horizon, 0)
    scale = naive_scale(y[: origins[0]])
    ranking: list[RankedModel] = []
    failures: list[tuple[str, str]] = []
    for name in candidate_names(candidates, season_length, origins[0]):
        try:
            probe = make_base_model(name, season_length=season_length).fit(y[: origins[0]])
            if probe.is_degraded:
                raise ValueError(probe.fallback_reason_)
            template = probe.clone_with_fitted_structure()
            errors = backtest_errors(template, y, horizon, origins)
        except ValueError as error:
            failures.append((name, str(error)))
            continue
        score = weighted_error(errors, scale, under_weight)
        ranking.append(RankedModel(name, score, errors, template))
    ranking.sort(key=lambda ranked: ranked.score)
    return ModelSelection(tuple(ranking), tuple(failures), horizon, len(origins))


class Auto(ForecastModel):
    """Backtest-based model selection with fallback (see :func:`select_model`).

    Fitted attributes: ``selection_`` (the ranking), ``chosen_`` (the model
    in use), ``model_`` (it, fitted), ``backtest_errors_`` (score per
    candidate, inf for those that failed) and ``skipped_`` (ranked models
    passed over at this fit, with why). Its interval is the union of the
    chosen model's own interval and the empirical quantiles of that model's
    backtest errors, so it is never narrower than what the backtest saw.
    """

    name = "auto"

    def __init__(
        self,
        *,
        candidates: Sequence[str] | None = None,
        horizon: int = 5,
        n_origins: int = 16,
        season_length: int | None = None,
        under_weight: float = DEFAULT_UNDER_WEIGHT,
        selection: ModelSelection | None = None,
    ) -> None:
        if horizon < 1 or n_origins < 1:
            raise ValueError("horizon and n_origins must be >= 1")
        for candidate in candidates or ():
            make_base_model(candidate, season_length=season_length)  # fail fast on a bad name
        self.candidates = None if candidates is None else tuple(candidates)
        self.horizon = horizon
        self.n_origins = n_origins
        self.season_length = season_length
        self.under_weight = under_weight
        self.selection = selection

    def _fit(self, y: FloatArray) -> FloatArray:
        self.selection_ = self.selection or select_model(
            y,
            candidates=self.candidates,
            horizon=self.horizon,
            n_origins=self.n_origins,
            season_length=self.season_length,
            under_weight=self.under_weight,
        )
        self.backtest_errors_ = self.selection_.scores
        self.skipped_: list[tuple[str, str]] = []
        for ranked in self.selection_.ranking:
            model = ranked.template.clone().fit(y)
            reason = self._unusable(model, y)
            if reason is None:
                self.model_, self.chosen_, self.chosen_errors_ = model, ranked.name, ranked.errors
                return model.residuals_
            self.skipped_.append((ranked.name, reason))
        self.model_, self.chosen_ = Naive().fit(y), "naive"
        self.chosen_errors_ = np.empty((0, 1))
        return self.model_.residuals_

    def _unusable(self, model: ForecastModel, y: FloatArray) -> str | None:
        """Why a fitted candidate cannot be used on ``y``, or None when it can."""
        if model.fallback_reason_ is not None:
            return model.fallback_reason_
        check = model.predict(self.selection_.horizon)
        if check.notes:  # its predict failed and the base class stood in
            return "; ".join(check.notes)
        peak = float(y.max())
        if peak > 0.0 and check.mean.max() > ABSURD_GROWTH * peak:
            return f"forecast {check.mean.max():.4g} is over {ABSURD_GROWTH:g}x the peak"
        return None

    def _update(self, y: FloatArray) -> FloatArray:
        # The chosen model keeps its parameters; if it no longer holds up on
        # the new data, walk the ranking again as a fit would.
        self.model_.update(y)
        if self._unusable(self.model_, y) is not None:
            return self._fit(y)
        return self.model_.residuals_

    def _predict_mean(self, h: int) -> FloatArray:
        return self._predict_interval(h, 0.8)[0]

    def _predict_interval(self, h: int, level: float) -> tuple[FloatArray, FloatArray, FloatArray]:
        own = self.model_.predict(h, level)
        if self.chosen_errors_.size < 2:
            return own.mean, own.lower, own.upper
        # Errors grow roughly with the square root of the step: pool all steps
        # on that scale for enough samples, then scale back per step.
        pooled = (self.chosen_errors_ / random_walk_scale(self.chosen_errors_.shape[1])).ravel()
        low_q, high_q = np.quantile(pooled, [(1.0 - level) / 2.0, (1.0 + level) / 2.0])
        growth = random_walk_scale(h)
        lower = np.minimum(own.lower, own.mean + low_q * growth)
        upper = np.maximum(own.upper, own.mean + high_q * growth)
        return own.mean, lower, upper

    def describe(self) -> str:
        """One line for logs and status: which model, and how the others scored."""
        scores = ", ".join(f"{name} {score:.3g}" for name, score in self.backtest_errors_.items())
        return f"auto chose {self.chosen_} (backtest error: {scores})"
