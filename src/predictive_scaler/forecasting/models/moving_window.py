"""Whether a new window moves the last one on: how many of its points were already seen.

The operator reads a workload's recent window again every sync period; between
selections the window has usually moved on by a few points. A model whose
update is a filter over its window (ARIMA's Kalman filter, ETS's smoothing) can
then run it over the new points alone, from where the last pass ended, instead
of over the whole window again.
"""

from __future__ import annotations

import numpy as np

from predictive_scaler.forecasting.forecast import FloatArray

# At least this share of a new window must be points already seen, or it is
# taken as another window (a gap refilled, a different workload's load).
MIN_OVERLAP = 0.5


def overlap(previous: FloatArray, window: FloatArray) -> int | None:
    """How many of ``window``'s first points are ``previous``'s last ones, the most that fit.

    The whole window when it is ``previous`` again (nothing new); None when
    fewer than MIN_OVERLAP of it were seen.
    """
    if np.array_equal(previous, window):
        return window.size
    least = max(1, int(np.ceil(MIN_OVERLAP * window.size)))
    longest = min(window.size - 1, previous.size)
    if longest < least:
        return None
    for start in np.flatnonzero(previous[-longest:] == window[0]):
        shared = longest - int(start)
        if shared < least:
            break
        if np.array_equal(previous[previous.size - shared :], window[:shared]):
            return shared
    return None
