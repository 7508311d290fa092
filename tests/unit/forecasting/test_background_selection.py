"""A selection handed to another worker, and one stopped by its CPU budget."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from predictive_scaler.forecasting import (
    ModelPendingError,
    RefreshRequest,
    ScheduledSelection,
    refresh_model,
    select_model,
)
from predictive_scaler.forecasting.refresh import Submit
from predictive_scaler.forecasting.seasons import TimedSeries
from tests.conftest import seasonal_load

SERIES = seasonal_load(300)
STEP = 60.0


def into(submitted: list[RefreshRequest], waits: list[float] | None = None) -> Submit:
    """A submit that only keeps the requests (the test delivers outcomes itself)."""

    def submit(request: RefreshRequest, _deliver: object, may_wait: float) -> None:
        submitted.append(request)
        if waits is not None:
            waits.append(may_wait)

    return submit


def window(end: float, values: np.ndarray = SERIES) -> TimedSeries:
    return TimedSeries(values, STEP, end)


def test_a_spent_budget_leaves_candidates_unscored_and_keeps_naive() -> None:
    spent = select_model(SERIES, candidates=["naive", "holt", "arima"], cpu_deadline=0.0)

    assert spent.unscored == ("holt", "arima")
    assert [ranked.name for ranked in spent.ranking] == ["naive"]
    full = select_model(SERIES, candidates=["naive", "holt", "arima"])
    assert full.unscored == ()
    assert len(full.ranking) >= 2


def test_an_over_budget_refresh_says_so_and_still_fits() -> None:
    forecaster = ScheduledSelection("auto", budget_seconds=0.0)
    submitted: list[RefreshRequest] = []
    forecaster.submit = into(submitted)

    with pytest.raises(ModelPendingError):
        forecaster.forecast_series(window(1e6), 5, 0.9, 1e6)
    refreshed = refresh_model(submitted[0])

    assert refreshed.over_budget
    assert "holt" in refreshed.unscored
    assert refreshed.pathways[0].fitted.predict(3, 0.9).mean.shape == (3,)


def test_requests_and_outcomes_cross_a_process_boundary() -> None:
    submitted: list[RefreshRequest] = []
    forecaster = ScheduledSelection(
        "auto",
        candidates=["naive", "holt"],
        submit=into(submitted),
    )
    with pytest.raises(ModelPendingError):
        forecaster.forecast_series(window(1e6), 5, 0.9, 1e6)

    request = pickle.loads(pickle.dumps(submitted[0]))
    refreshed = pickle.loads(pickle.dumps(refresh_model(request)))

    assert refreshed.selected_at == 1e6
    assert refreshed.cpu_seconds > 0
    np.testing.assert_array_equal(request.series, submitted[0].series)


def test_the_model_in_use_forecasts_while_its_successor_is_selected() -> None:
    submitted: list[RefreshRequest] = []
    forecaster = ScheduledSelection(
        "auto",
        candidates=["naive", "holt"],
        refresh_seconds=600,
        submit=into(submitted),
    )
    with pytest.raises(ModelPendingError, match="first time"):
        forecaster.forecast_series(window(1e6), 5, 0.9, 1e6)
    with pytest.raises(ModelPendingError):
        forecaster.forecast_series(window(1e6 + 30), 5, 0.9, 1e6 + 30)
    assert len(submitted) == 1, "one selection in flight at a time"

    forecaster.deliver(refresh_model(submitted[0]))
    first = forecaster.forecast_series(window(1e6 + 60), 5, 0.9, 1e6 + 60)
    installed = forecaster.take_installed()
    assert installed is not None
    assert installed.selected_at == 1e6
    assert forecaster.take_installed() is None
    assert first.mean.shape == (5,)

    # Due again: the next selection is submitted, the fitted model goes on forecasting.
    later = forecaster.forecast_series(window(1e6 + 660), 5, 0.9, 1e6 + 660)
    assert len(submitted) == 2
    assert forecaster.selecting
    assert np.isfinite(later.mean).all()


def test_a_failed_selection_is_reported_and_tried_again() -> None:
    submitted: list[RefreshRequest] = []
    forecaster = ScheduledSelection("holt", submit=into(submitted))
    with pytest.raises(ModelPendingError):
        forecaster.forecast_series(window(1e6), 5, 0.9, 1e6)

    forecaster.deliver(RuntimeError("worker died"))
    with pytest.raises(ModelPendingError, match="worker died"):
        forecaster.forecast_series(window(1e6 + 60), 5, 0.9, 1e6 + 60)

    assert len(submitted) == 2


def test_a_first_selection_may_not_wait_and_a_reselection_may_wait_a_refresh() -> None:
    """An object with no forecast goes before one whose model still serves."""
    submitted: list[RefreshRequest] = []
    waits: list[float] = []
    forecaster = ScheduledSelection("holt", refresh_seconds=600, submit=into(submitted, waits))
    with pytest.raises(ModelPendingError):
        forecaster.forecast_series(window(1e6), 5, 0.9, 1e6)
    forecaster.deliver(RuntimeError("worker died"))
    with pytest.raises(ModelPendingError):
        forecaster.forecast_series(window(1e6 + 60), 5, 0.9, 1e6 + 60)
    forecaster.deliver(refresh_model(submitted[-1]))
    forecaster.forecast_series(window(1e6 + 120), 5, 0.9, 1e6 + 120)
    forecaster.forecast_series(window(1e6 + 720), 5, 0.9, 1e6 + 720)

    assert waits == [0.0, 0.0, 600.0]
