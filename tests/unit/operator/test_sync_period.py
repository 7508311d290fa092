"""The period an object is evaluated at, read before its spec is validated."""

from __future__ import annotations

import pytest

from predictive_scaler.operator import handlers
from predictive_scaler.operator.resource import MAX_SYNC_SECONDS, MIN_SYNC_SECONDS

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("written", "seconds"),
    [
        ({"syncPeriod": "45s"}, 45.0),
        ({}, handlers.DEFAULT_SYNC_SECONDS),
        ({"syncPeriod": "often"}, handlers.DEFAULT_SYNC_SECONDS),
        # Past the CRD's rules (an object stored before them): evaluated, refused with
        # InvalidSpec, at a bounded pace.
        ({"syncPeriod": "1s"}, MIN_SYNC_SECONDS),
        ({"syncPeriod": "0s"}, handlers.DEFAULT_SYNC_SECONDS),  # not a duration the CRD takes
        ({"syncPeriod": "30d"}, MAX_SYNC_SECONDS),
    ],
)
def test_the_period_stays_within_the_crds_bounds(written: dict[str, str], seconds: float) -> None:
    assert handlers._sync_seconds(written) == seconds
