"""The numerical setting every model computes in: one BLAS thread, no warnings, and a
load at a magnitude its libraries are built for."""

from __future__ import annotations

import functools
import math
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext

import numpy as np
from threadpoolctl import ThreadpoolController

from predictive_scaler.forecasting.forecast import FloatArray


@functools.cache
def _thread_pools() -> ThreadpoolController:
    return ThreadpoolController()


# What the model_numerics calls this thread is inside of have set up already.
_inside = threading.local()


@contextmanager
def model_numerics(limit_threads: bool = True) -> Iterator[None]:
    """One BLAS/OpenMP thread, no warnings, no floating-point traps, while a model computes.

    Forecasting works on small matrices, many series at a time (one per
    workload, in worker threads). Multi-threaded OpenBLAS on such work under
    a loaded CPU made one ARIMA order search 120x slower (30 s instead of
    0.25 s on two cores) while its threads spun against each other. Library
    warnings (convergence, frequency) are expected on load data and are
    reported through ``fallback_reason_`` instead when they matter.

    Models nest (auto holds a pool, the pool its members), and the settings
    of the outermost call hold for everything inside it: a nested call
    changes nothing and costs nothing. Setting the thread limit took 14 % of
    an update between selections when every level set it again.
    """
    quiet, limited = getattr(_inside, "quiet", False), getattr(_inside, "limited", False)
    if quiet and (limited or not limit_threads):
        yield
        return
    with (
        _thread_pools().limit(limits=1) if limit_threads and not limited else nullcontext(),
        warnings.catch_warnings(),
        np.errstate(all="ignore"),
    ):
        warnings.simplefilter("ignore")
        _inside.quiet, _inside.limited = True, limited or limit_threads
        try:
            yield
        finally:
            _inside.quiet, _inside.limited = quiet, limited


# Typical magnitudes (mean absolute load over the window) that models fit as
# they are. The optimisers inside statsmodels and scikit-learn stop on
# absolute tolerances, so the same load in another unit is fitted
# differently, and far from 1 wrongly: measured on a sine and a NASA window
# scaled by powers of two, ARIMA's forecasts and bounds move by at most 2 %
# from magnitude 2^-8 to 2^28, but at 2^-18 its forecast left for 10^17
# times the load, below that its bound was 100-100,000 times too wide, and at
# 10^-6 (not a power of two) its covariance step never returned (LAPACK's
# SVD spinning). Every public trace's windows lie inside (NASA 2^0-2^7.4,
# Alibaba 2^4.8-2^5.7, Azure 2^22.4-2^22.7, Google 2^2.5-2^6.2), so they
# are fitted exactly as before. Bringing every load to 1-2 instead was
# measured on the forecasting benchmark: NASA and Google a little better,
# Azure worse (auto's MASE at h = 5 1.013 -> 1.096) and dearer (a fresh
# selection 443 -> 750 ms; NASA's update 4.1 -> 5.9 ms), so a load is
# fitted in its own unit unless that unit puts it far from 1.
MAGNITUDES_FITTED_AS_THEY_ARE = (2.0**-10, 2.0**30)


def load_unit(series: FloatArray) -> float:
    """What ``series`` is divided by before a model fits it: 1, or a power of two.

    1 when its mean absolute value is zero or within
    MAGNITUDES_FITTED_AS_THEY_ARE; otherwise the power of two that brings it
    to [1, 2). A power of two, so that dividing and multiplying back are exact.
    """
    magnitude = float(np.mean(np.abs(series))) if series.size else 0.0
    low, high = MAGNITUDES_FITTED_AS_THEY_ARE
    if magnitude == 0.0 or not math.isfinite(magnitude) or low <= magnitude <= high:
        return 1.0
    return math.ldexp(1.0, math.floor(math.log2(magnitude)))
