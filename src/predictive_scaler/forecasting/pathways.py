"""Two ways to forecast the recent window, and their mean: as it is, and minus the seasons.

The plain pathway's models fit the recent window; the seasonal pathway's fit
the window minus the long history's seasonal profile, which is added back to
their forecast. ``auto`` used to keep whichever backtested better. At 60
origins per public trace (the benchmark's), the equal-weight mean of the two
beat that choice at every horizon on every trace with a season (MASE at
h = 1/2/5: NASA 0.745/0.845/0.884 against 0.751/0.859/0.896, Alibaba
0.859/0.982/1.262 against 0.876/0.992/1.291, Azure 0.712/0.844/1.040
against 0.778/0.917/1.147): the same combination puzzle as auto's pool
(:data:`~predictive_scaler.forecasting.selection.POOL`), a choice made on
16 backtest origins being mostly noise. The absolute error of a mean is at
most the mean of the absolute errors, so the mean is never worse than the
worse pathway; a pathway that backtests more than :data:`COMBINE_WITHIN`
times worse than the other is still left out, so a profile that does not
fit the load cannot drag a good forecast halfway to a bad one.

Nor does one pathway always do better than the mean. At the same origins
(MASE at h = 1/2/5, mean against seasonal alone against plain alone):
NASA 0.742/0.836/0.880, 0.733/0.823/0.875, 0.760/0.861/0.904; Alibaba
0.855/0.973/1.254, 0.842/0.975/1.278, 0.881/0.987/1.267; Azure
0.680/0.816/1.013, 0.820/0.938/1.125, 0.785/0.970/1.246. The seasonal
pathway alone gains 1-2 % on NASA and loses 20 % on Azure, where the two
pathways' errors cancel most.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from predictive_scaler.forecasting.auto import Auto, ModelSelection
from predictive_scaler.forecasting.base import ForecastModel
from predictive_scaler.forecasting.calibration import conformal_offsets
from predictive_scaler.forecasting.forecast import FloatArray, Forecast
from predictive_scaler.forecasting.metrics import DEFAULT_UNDER_WEIGHT, weighted_error_per_row
from predictive_scaler.forecasting.seasons import SeasonalProfile
from predictive_scaler.forecasting.selection import robust_score

# Marks a model that forecasts the recent window minus the long history's seasonal profile.
SEASON_SUFFIX = "+season"
# Both pathways are averaged unless one backtests this many times worse than the other
# (the heavy-tail guard's factor): on the public traces the mean never lost to the
# better pathway alone by that much, and a wider gap is a profile that does not fit.
COMBINE_WITHIN = 1.5


@dataclass(frozen=True)
class Pathway:
    """A model fitted to the recent window, or to the window minus ``profile`` plus ``shift``."""

    fitted: ForecastModel = field(repr=False)
    selection: ModelSelection | None = field(repr=False)
    profile: SeasonalProfile | None = field(default=None, repr=False)
    shift: float = 0.0

    @property
    def seasonal(self) -> bool:
        return self.profile is not None

    @property
    def suffix(self) -> str:
        return SEASON_SUFFIX if self.seasonal else ""

    def chosen(self, fallback: str) -> str:
        """The model in use, ``fallback`` for a fixed model, marked when seasonal."""
        name = self.fitted.chosen_ if isinstance(self.fitted, Auto) else fallback
        return name + self.suffix

    def adjusted(self, series: FloatArray, step_times: FloatArray) -> FloatArray:
        """``series`` as this pathway's model sees it (``step_times`` its clock, and beyond)."""
        if self.profile is None:
            return series
        return _minus(self.profile.along(step_times[: series.size]), series, self.shift)

    def seasonal_part(self, times: FloatArray) -> FloatArray | float:
        """What turns the model's forecast at ``times`` back into load."""
        return 0.0 if self.profile is None else self.profile.along(times) - self.shift


def deseasonalised(
    profile: SeasonalProfile, step_times: FloatArray, series: FloatArray
) -> tuple[FloatArray, float]:
    """``series`` minus ``profile`` along its clock, shifted to stay non-negative; and the shift."""
    base = profile.along(step_times[: series.size])
    shift = max(0.0, float((base - series).max()))
    return _minus(base, series, shift), shift


def _minus(base: FloatArray, series: FloatArray, shift: float) -> FloatArray:
    """``series`` minus the profile's ``base`` along its clock, plus ``shift``; never below zero."""
    return np.asarray(np.clip(series - base + shift, 0.0, None), dtype=np.float64)


def pathways_to_use(
    plain: ModelSelection | None, seasonal: ModelSelection | None
) -> tuple[bool, bool]:
    """Whether the plain and the seasonal pathway take part, from their backtests.

    A fixed model (no selection) uses the season found. Otherwise both take
    part unless one scored nothing or backtests more than COMBINE_WITHIN
    times worse than the other; then the better alone (the seasonal on a tie).
    """
    if plain is None or seasonal is None:
        return False, True
    plain_error, seasonal_error = plain.best_score_in_units, seasonal.best_score_in_units
    better, worse = sorted((plain_error, seasonal_error))
    if np.isfinite(worse) and worse <= COMBINE_WITHIN * better:
        return True, True
    return plain_error < seasonal_error, plain_error >= seasonal_error


def combined_name(pathways: Sequence[Pathway], fallback: str) -> str:
    """The models in use, as ``Combination`` names a mean: ``mean(a, b+season)``."""
    return _mean_of([pathway.chosen(fallback) for pathway in pathways])


def _mean_of(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else f"mean({', '.join(names)})"


def combined_errors(pathways: Sequence[Pathway]) -> FloatArray | None:
    """The mean's backtest errors (one row per origin), when every pathway has them alike.

    A pathway's backtest error is load - forecast whether its model saw the
    window with or without the profile, so the mean forecast's error is the
    mean of theirs, origin by origin.
    """
    tables = [
        pathway.fitted.chosen_errors_ for pathway in pathways if isinstance(pathway.fitted, Auto)
    ]
    if len(tables) != len(pathways) or len({table.shape for table in tables}) != 1:
        return None
    if tables[0].size == 0:
        return None
    return np.asarray(np.mean(tables, axis=0), dtype=np.float64)


def combined_score(errors: FloatArray, scale: float) -> float:
    """The mean's backtest score on the plain pathway's scale, as auto scores a candidate."""
    return robust_score(weighted_error_per_row(errors, scale, DEFAULT_UNDER_WEIGHT))


def combined_band(pathways: Sequence[Pathway], times: FloatArray, level: float) -> Forecast:
    """The pathways' mean forecast at ``times`` with its band (not yet clipped at zero).

    It is named after the models in use (as :func:`combined_name`), which is
    what the decision's words and the status say forecast the load.

    The band is calibrated on the mean's own backtest errors (split
    conformal, as auto's is) when there are enough; else it is the mean of
    the pathways' bands.
    """
    means, lowers, uppers = [], [], []
    notes: list[str] = []
    names: list[str] = []
    for pathway in pathways:
        inner = pathway.fitted.predict(times.size, level)
        names.append(pathway.chosen(inner.model))
        back = pathway.seasonal_part(times)
        means.append(inner.mean + back)
        lowers.append(inner.lower + back)
        uppers.append(inner.upper + back)
        notes.extend(inner.notes)
    mean = np.asarray(np.mean(means, axis=0), dtype=np.float64)
    lower = np.asarray(np.mean(lowers, axis=0), dtype=np.float64)
    upper = np.asarray(np.mean(uppers, axis=0), dtype=np.float64)
    errors = combined_errors(pathways) if len(pathways) > 1 else None
    if errors is not None:
        try:
            low, high = conformal_offsets(errors, times.size, level)
        except ValueError:
            pass
        else:
            lower, upper = mean + low, mean + high
    return Forecast(
        _mean_of(names),
        mean,
        np.minimum(lower, mean),
        np.maximum(upper, mean),
        level,
        tuple(dict.fromkeys(notes)),
    )
