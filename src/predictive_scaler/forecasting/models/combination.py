"""The mean of several models' forecasts: a forecast combination."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from predictive_scaler.forecasting.base import ForecastModel
from predictive_scaler.forecasting.forecast import FloatArray


class Combination(ForecastModel):
    """The equal-weight mean of ``members``' forecasts.

    The oldest robust result of forecasting (Bates and Granger, 1969; the M
    competitions since): the mean of a few good models is rarely far behind
    the best of them and often ahead, because their errors partly cancel. On
    NASA and Alibaba the mean of auto's top three beat its top model when it
    was first measured. A member that cannot fit makes the whole combination
    fall back, so it never silently becomes a smaller one.
    """

    uses_thread_pools = False  # each member limits its own threads

    def __init__(self, members: Sequence[ForecastModel]) -> None:
        if len(members) < 2:
            raise ValueError(f"a combination needs two members or more, got {len(members)}")
        self.members = tuple(members)
        self.name = "mean(" + ", ".join(member.name for member in self.members) + ")"

    def clone(self) -> Combination:
        return Combination([member.clone() for member in self.members])

    def clone_with_fitted_structure(self) -> ForecastModel:
        if not hasattr(self, "fitted_"):
            return self.clone()
        return Combination([member.clone_with_fitted_structure() for member in self.fitted_])

    def _fit(self, y: FloatArray) -> FloatArray:
        self.fitted_ = [member.clone().fit(y) for member in self.members]
        return self._residuals()

    def _update(self, y: FloatArray) -> FloatArray:
        for member in self.fitted_:
            member.update(y)
        return self._residuals()

    def _residuals(self) -> FloatArray:
        degraded = [member for member in self.fitted_ if member.is_degraded]
        if degraded:
            raise ValueError(f"member {degraded[0].name}: {degraded[0].fallback_reason_}")
        # Members' residual series can differ in length (lags): average their common tail.
        residuals = [member.load_residuals() for member in self.fitted_]
        length = min(member.size for member in residuals)
        if length == 0:
            return np.empty(0)
        tails = [member[member.size - length :] for member in residuals]
        return np.asarray(np.mean(tails, axis=0), dtype=np.float64)

    def _predict_mean(self, h: int) -> FloatArray:
        means = [member.forecast_mean(h) for member in self.fitted_]
        return np.asarray(np.mean(means, axis=0), dtype=np.float64)
