"""Conformal quantiles: the ranks split conformal prescribes, read without np.quantile."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from predictive_scaler.forecasting.calibration import conformal_quantiles

ERRORS = arrays(
    np.float64,
    st.integers(1, 400),
    elements=st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
)


@settings(max_examples=300, deadline=None)
@given(errors=ERRORS, level=st.floats(0.01, 0.999))
def test_conformal_quantiles_are_numpys_inverted_cdf_at_the_conformal_rank(
    errors: np.ndarray, level: float
) -> None:
    n = errors.size
    rank = min(1.0, math.ceil((n + 1) * (1.0 + level) / 2.0) / n)
    expected = np.quantile(errors, [1.0 - rank, rank], method="inverted_cdf")
    assert conformal_quantiles(errors, level) == (float(expected[0]), float(expected[1]))


def test_conformal_quantiles_leave_the_errors_in_their_order() -> None:
    errors = np.array([3.0, -1.0, 2.0, 0.5, -4.0])
    conformal_quantiles(errors, 0.5)
    np.testing.assert_array_equal(errors, [3.0, -1.0, 2.0, 0.5, -4.0])
