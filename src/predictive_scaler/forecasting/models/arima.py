"""ARIMA with a small order search (statsmodels' likelihood, R's CSS-ML search rules)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
from statsmodels.tools.eval_measures import aic, aicc, bic
from statsmodels.tsa.arima.model import ARIMA

from predictive_scaler.forecasting.base import ForecastModel, guarded_means
from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.forecasting.models.arima_rules import (
    approximate_criterion,
    css_fit,
    differencing_order,
    invert_ma,
    on_invertibility_boundary,
    stationary_and_invertible,
)
from predictive_scaler.forecasting.models.search import lowest_criterion
from predictive_scaler.forecasting.models.state_space import (
    RECENT_FILTERS,
    RECENT_FITS,
    FilterEnd,
    ParameterFilter,
    shed_filter_buffers,
    state_space_forecasts,
)

Order = tuple[int, int, int]
# statsmodels' own formulas, as its results compute their criteria.
CRITERIA = {"aic": aic, "bic": bic, "aicc": aicc}
# Windows longer than this search their order on conditional sums of squares,
# as R's auto.arima does by default (Hyndman and Khandakar, 2008): only the
# order chosen is fitted by exact maximum likelihood. R's 150 is kept though
# 50 would cut a fresh selection on 6 h at 5 min (72 points) by 20-30 % with
# the same orders chosen on Azure and Google: on the tests' seasonal load the
# approximate search then keeps (2,0,1) at 72 and 100 points, 25-36 AIC worse
# than the (2,0,2) exact likelihood finds (CSS estimates on short windows
# leave AR parts non-stationary, so better orders give way).
APPROXIMATE_ABOVE = 150
# L-BFGS iterations of a maximum-likelihood fit started from estimates near
# the optimum (the order search's CSS estimates, as R's CSS-ML does, or the
# last fit's on a window that moved a little). statsmodels' default of 50 is
# for a cold start; every iteration lowers the likelihood's objective, so a
# warm fit cut short is never worse than its start. Measured at the forecasting
# benchmark's 60 origins: auto's fresh selection on Alibaba's 720 points from
# 1.09 s to 0.62 s of CPU (NASA 0.23 to 0.19 s), MASE at h = 1/2/5 within
# 0.003 on every public trace. An hourly re-selection's order search is not
# warm-started from the hour before's estimates per order: on Azure's
# 36-point windows that saved 27 % of a search (158 to 115 ms) and changed
# the order chosen in 12 of 39 searches, by up to 16 AIC either way.
WARM_START_ITERATIONS = 10


def estimates(model: ARIMA, start_params: Any) -> Any:
    """statsmodels' maximum-likelihood estimates (warm-started ones cut short, see above)."""
    return model.fit(
        start_params=start_params,
        method_kwargs=None if start_params is None else {"maxiter": WARM_START_ITERATIONS},
        return_params=True,
    )


def criterion_at(model: ARIMA, params: Any, criterion: str) -> float:
    """The information criterion the filter's results would give at ``params``, from the
    likelihood alone.

    An order search keeps one fit of nine; building the filter's results for each
    took 2.2 ms of a 36-point fit, the likelihood takes 0.5. statsmodels' results
    count every parameter as free and, for these models (no diffuse state), every
    observation after the likelihood's burn: the same criterion to the bit (a unit
    test holds it to statsmodels' own for d = 0 and 1).
    """
    observations = model.nobs - model.ssm.loglikelihood_burn
    return float(CRITERIA[criterion](float(model.loglike(params)), observations, np.size(params)))


def maximum_likelihood(model: ARIMA, start_params: Any) -> Any:
    """statsmodels' maximum-likelihood estimates, and its Kalman filter at them.

    ``ARIMA.fit`` ends with the Kalman smoother and the estimates' covariance
    (an outer product of scores, numerically differentiated per observation).
    Nothing here reads either: forecasts, their intervals, the residuals and
    the information criteria all come from the filter. Estimated alike and
    filtered alone, a warm refit on Alibaba's 600-point windows gives the same
    estimates, criterion, forecasts, intervals and residuals (to the last bit)
    in less time. (The covariance's SVD is also where a fit of a load in a
    tiny unit once spun for good: see ``MAGNITUDES_FITTED_AS_THEY_ARE``.)
    """
    return model.filter(estimates(model, start_params), cov_type="none")


class Arima(ForecastModel):
    """statsmodels ARIMA; the order is searched by information criterion unless given.

    The differencing order d comes from repeated KPSS tests (as in
    auto.arima); then every (p, q) up to (max_p, max_q) is fitted and the
    lowest ``criterion`` wins. Only the last ``max_window`` points are used:
    short-term load dynamics live in the recent past, and the search stays
    fast enough to rerun on every refit.
    """

    name = "arima"
    min_observations = 10

    def __init__(
        self,
        *,
        order: Order | None = None,
        max_p: int = 2,
        max_d: int = 1,
        max_q: int = 2,
        criterion: str = "aic",
        max_window: int = 600,
        start_params: tuple[float, ...] | None = None,
    ) -> None:
        if criterion not in CRITERIA:
            raise ValueError(f"criterion must be one of {tuple(CRITERIA)}, got {criterion!r}")
        if order is not None and (len(order) != 3 or min(order) < 0):
            raise ValueError(f"order must be three non-negative integers, got {order!r}")
        self.order = None if order is None else (int(order[0]), int(order[1]), int(order[2]))
        self.max_p = max_p
        self.max_d = max_d
        self.max_q = max_q
        self.criterion = criterion
        self.max_window = max_window
        self.start_params = start_params

    def candidate_orders(self, y: FloatArray) -> list[Order]:
        if self.order is not None:
            return [self.order]
        d = differencing_order(y, self.max_d)
        return [
            (p, d, q) for p, q in itertools.product(range(self.max_p + 1), range(self.max_q + 1))
        ]

    def _fit(self, y: FloatArray) -> FloatArray:
        window = y[-self.max_window :]
        # Warm-starting from a previous fit's parameters makes a refit ~5x faster.
        start = self.start_params if self.order is not None else None
        settings = (self.order, self.max_p, self.max_d, self.max_q, self.criterion, start)
        self.information_criterion_, self.order_, self.results_ = RECENT_FITS.get(
            ("fit", settings, window.tobytes()), lambda: self._search(window, start)
        )
        shed_filter_buffers(self.results_)
        self.params_ = np.array(self.results_.params, dtype=np.float64)
        # Where the filter over the latest window ended: the fit's own until an update.
        self.filter_end_ = FilterEnd.of(self.results_.filter_results, window)
        self.filter_: ParameterFilter | None = None
        return self._residuals()

    def _search(self, window: FloatArray, start: tuple[float, ...] | None) -> Any:
        """(criterion, order, results) of the order with the lowest criterion.

        Every order is fitted by maximum likelihood on short windows; on
        longer ones (APPROXIMATE_ABOVE) the orders are ranked by the
        criterion of their conditional-sum-of-squares fit, and the best that
        maximum likelihood can fit from those estimates is kept, under R's
        CSS-ML rules (Hyndman and Khandakar, 2008): MA roots inside the unit
        circle are reflected, and an order whose CSS AR part is not
        stationary, or whose fit ends on the MA boundary, gives way to the
        next. A statsmodels ARIMA fit takes 30-200 ms (a numerically
        differentiated Kalman-filter likelihood), a CSS fit a few: on NASA
        windows of 180 points the search took 0.7 s, and now takes ~60 ms.
        The rules replaced cold fits (110-255 ms each, where a warm one takes
        20-75) and took auto's fresh selection on Alibaba's 600-point
        windows from 539 to 400 ms (median, 60 origins).
        """

        def model_of(order: Order) -> ARIMA:
            # A constant only where nothing is differenced (statsmodels' rule too).
            return ARIMA(window, order=order, trend="c" if order[1] == 0 else "n")

        def fit(order: Order, start_params: Any = start) -> Any:
            model = model_of(order)
            results = maximum_likelihood(model, start_params)
            if start_params is not None and on_invertibility_boundary(results):
                # A start from another window's estimates can lead the optimiser
                # to this local optimum; from statsmodels' own start it seldom does.
                results = maximum_likelihood(model, None)
            return results

        def fit_from_css(order: Order, params: FloatArray, variance: float) -> Any:
            """R's CSS-ML: None where R's ``arima`` stops or auto.arima rejects the fit."""
            offset = int(order[1] == 0)
            phi = params[offset : offset + order[0]]
            theta = invert_ma(params[offset + order[0] :])
            if not stationary_and_invertible(phi, theta):
                # "non-stationary AR part from CSS" (a root that maInvert left on the
                # unit circle too): auto.arima moves on to the next order, where a cold
                # fit of this one cost as much as 2-10 warm ones.
                return None
            start_params = (*params[: offset + order[0]], *theta, variance)
            results = maximum_likelihood(model_of(order), start_params)
            # An MA root on the unit circle: over-differenced, as auto.arima's root
            # check rejects it.
            return None if on_invertibility_boundary(results) else results

        def cold_estimates(order: Order) -> tuple[ARIMA, Any]:
            model = model_of(order)
            return model, estimates(model, None)

        orders = self.candidate_orders(window)
        if self.order is not None:
            return lowest_criterion(orders, fit, self.criterion)
        if window.size <= APPROXIMATE_ABOVE:
            # Every order by exact likelihood from statsmodels' start; only the one
            # kept is filtered into results.
            score, order, (model, params) = lowest_criterion(
                orders,
                cold_estimates,
                self.criterion,
                lambda fitted: criterion_at(fitted[0], fitted[1], self.criterion),
            )
            try:
                return score, order, model.filter(params, cov_type="none")
            except (ValueError, np.linalg.LinAlgError):
                # Where the likelihood ran the filter should too; if not, filter every
                # order as before, so a failing one gives way to the next.
                return lowest_criterion(orders, fit, self.criterion)
        d = orders[0][1]
        x = np.diff(window, d) if d else window
        ranked: list[tuple[float, Order, FloatArray, float]] = []
        for order in orders:
            p, q = order[0], order[2]
            try:
                params, variance = css_fit(x, p, q, mean=d == 0)
            except (ValueError, np.linalg.LinAlgError):
                continue
            k = p + q + int(d == 0) + 1
            ranked.append(
                (
                    approximate_criterion(variance, x.size, k, self.criterion),
                    order,
                    params,
                    variance,
                )
            )
        ranked.sort(key=lambda item: item[0])
        for _, order, params, variance in ranked:
            try:
                results = fit_from_css(order, params, variance)
            except (ValueError, np.linalg.LinAlgError):
                continue
            if results is None:
                continue
            score = float(getattr(results, self.criterion))
            if np.isfinite(score):
                return score, order, results
        raise ValueError(f"no candidate structure could be fitted ({self.criterion})")

    def _update(self, y: FloatArray) -> FloatArray:
        # Kalman filter only, with the fitted parameters: ~0.5 ms instead of ~50,
        # and over the new points alone when the window has only moved on.
        window = y[-self.max_window :]
        if self.filter_ is None:
            # Built while the fit's results are here: backtests filter whole windows.
            self.filter_ = ParameterFilter.of(self.results_)
        end = None if self.filter_end_ is None else self.filter_end_.extended(window)
        self.filter_end_ = end if end is not None else FilterEnd.of(self._filtered(window), window)
        # The fit's statsmodels results (its smoother's output with them) are
        # not read once the filter runs on its own; kept until the next
        # selection they doubled a forecaster's memory (0.56 to 1.29 MiB).
        self.results_ = None
        return self._residuals()

    def _filtered(self, window: FloatArray) -> Any:
        """The fitted model's Kalman filter over ``window``, parameters kept (FilterResults).

        ``results.apply`` would also run the Kalman smoother (the fit's
        results carry one), which nothing here reads: residuals, forecasts and
        their intervals come from the filter alone. ValueError when the fitted
        system varies with time (an update then refits).
        """
        if self.filter_ is None:
            self.filter_ = ParameterFilter.of(self.results_)
        parameter_filter = self.filter_
        key = ("filter", self.order_, self.params_.tobytes(), window.tobytes())
        return RECENT_FILTERS.get(key, lambda: parameter_filter.run(window))

    def filter_through(self, y: FloatArray, origins: Sequence[int]) -> Any:
        """One filter pass up to the last origin, or None when an update differs from it.

        An update re-filters its window from the window's start; when every
        origin's window starts at the series' start (no longer than
        ``max_window``) and this fit was made at the first origin, that is
        the same filter, read at each origin.
        """
        if self.is_degraded or self.y_.size != origins[0] or origins[-1] > self.max_window:
            return None
        try:
            return self._filtered(y[: origins[-1]])
        except ValueError:
            return None

    def _rolling_means_at_once(
        self, y: FloatArray, origins: Sequence[int], horizon: int
    ) -> FloatArray | None:
        filtered = self.filter_through(y, origins)
        means = None if filtered is None else state_space_forecasts(filtered, origins, horizon)
        if means is None:
            return None
        return guarded_means(means, y, origins)

    def _residuals(self) -> FloatArray:
        # The first 1 + d residuals measure the diffuse start, not the model.
        if self.filter_end_ is None:
            errors = np.asarray(self.results_.filter_results.forecasts_error[0], dtype=np.float64)
        else:
            errors = self.filter_end_.errors
        return errors[1 + self.order_[1] :]

    # A system that varies with time is never updated (ParameterFilter.of
    # refuses it), so where the fast paths give None the fit's own results
    # are still there and describe the latest window.

    def _predict_mean(self, h: int) -> FloatArray:
        # From the last predicted state: statsmodels' forecast() builds a
        # prediction object (~3 ms) for what is a few matrix products.
        if self.filter_end_ is None:
            return np.asarray(self.results_.forecast(h), dtype=np.float64)
        return self.filter_end_.means(h)

    def _predict_interval(self, h: int, level: float) -> tuple[FloatArray, FloatArray, FloatArray]:
        if self.filter_end_ is not None:
            return self.filter_end_.interval(h, level)
        frame = self.results_.get_forecast(h).summary_frame(alpha=1.0 - level)
        return (
            frame["mean"].to_numpy(dtype=np.float64),
            frame["mean_ci_lower"].to_numpy(dtype=np.float64),
            frame["mean_ci_upper"].to_numpy(dtype=np.float64),
        )

    def clone_with_fitted_structure(self) -> ForecastModel:
        params = self.get_params()
        if not self.is_degraded:
            params["order"] = self.order_
            params["start_params"] = tuple(float(v) for v in self.params_)
        return type(self)(**params)
