"""What the models see of a raw load series, and why.

Load series from Prometheus are messy: scrapes fail (NaN or a gap), counters
reset (a negative rate), a broken exporter reports Inf. Every model fits on
the cleaned series produced here, so each behaviour is decided once:

* an empty series, or one without a single finite value, has nothing to
  forecast from: ``ValueError``;
* NaN and +/-Inf are missing readings: interior gaps are linearly
  interpolated, leading gaps take the first reading, trailing gaps the last;
* negative values are impossible loads and are clipped to 0;
* values above ``MAX_LOAD`` are clipped to it, so that nothing overflows
  when it squares them (models fit in a unit of the load's own magnitude,
  see ``numerics.load_unit``, but errors and bands are in the load's unit).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from predictive_scaler.forecasting.forecast import FloatArray
from predictive_scaler.units import counted

# Far above any load in any unit a metric uses: a workload's memory in bytes
# passes 1e12 at a terabyte (60 pods of 16 GiB), and a clip there capped its
# forecast, and so its replicas. Its square is still far from overflowing.
MAX_LOAD = 1e30


def clean_series(y: ArrayLike) -> FloatArray:
    """Return a finite, non-negative float64 copy of ``y`` (see module doc)."""
    values = np.array(y, dtype=np.float64).ravel()
    if values.size == 0:
        raise ValueError("cannot forecast an empty series")
    finite = np.isfinite(values)
    if not finite.any():
        raise ValueError("cannot forecast a series without a single finite value")
    # Clip before filling gaps, so a gap next to an impossible reading is
    # filled from the reading's plausible (clipped) value.
    values = np.clip(values, 0.0, MAX_LOAD)
    if not finite.all():
        positions = np.arange(values.size)
        values = np.interp(positions, positions[finite], values[finite])
    return values


def carried_forward(values: FloatArray, slots: int | None = None) -> FloatArray:
    """``values`` with each NaN after a finite value filled with it, up to ``slots`` slots on
    (None: however far).

    Unlike :func:`clean_series`, nothing is read from after a gap: what a reader inside the
    gap would have had, as Prometheus carries a sample forward within its lookback.
    """
    positions = np.arange(values.size)
    last = np.maximum.accumulate(np.where(np.isfinite(values), positions, -1))
    fill = np.isnan(values) & (last >= 0)
    if slots is not None:
        fill &= positions - last <= slots
    filled = values.copy()
    filled[fill] = values[last[fill]]
    return filled


def cleaning_notes(y: ArrayLike) -> list[str]:
    """What :func:`clean_series` changes in ``y``, in words: one note per kind of change."""
    values = np.array(y, dtype=np.float64).ravel()
    finite = np.isfinite(values)
    changes = [
        (int((~finite).sum()), "missing or infinite", "filled from their neighbours"),
        (int((values[finite] < 0).sum()), "negative", "read as 0"),
        (int((values[finite] > MAX_LOAD).sum()), f"above {MAX_LOAD:g}", f"read as {MAX_LOAD:g}"),
    ]
    return [
        f"{count} of {counted(values.size, 'value')} {what}, {done}"
        for count, what, done in changes
        if count
    ]
