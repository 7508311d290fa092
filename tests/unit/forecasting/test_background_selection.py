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
from predictive_scaler.forecasting.handover import Delivery, Submit
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
    submitted: list[RefreshRequest] = []
    forecaster = ScheduledSelection("auto", budget_seconds=0.0, submit=into(submitted))

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

    forecaster.handover.deliver(refresh_model(submitted[0]))
    first = forecaster.forecast_series(window(1e6 + 60), 5, 0.9, 1e6 + 60)
    installed = forecaster.take_installed()
    assert installed is not None
    assert installed.selected_at == 1e6
    assert forecaster.take_installed() is None
    assert first.mean.shape == (5,)

    # Due again: the next selection is submitted, the fitted model goes on forecasting.
    later = forecaster.forecast_series(window(1e6 + 660), 5, 0.9, 1e6 + 660)
    assert len(submitted) == 2
    assert forecaster.handover.selecting
    assert np.isfinite(later.mean).all()


def test_a_failed_selection_is_reported_and_tried_again() -> None:
    submitted: list[RefreshRequest] = []
    forecaster = ScheduledSelection("holt", submit=into(submitted))
    with pytest.raises(ModelPendingError):
        forecaster.forecast_series(window(1e6), 5, 0.9, 1e6)

    forecaster.handover.deliver(RuntimeError("worker died"))
    with pytest.raises(ModelPendingError, match=r"worker died.*tried again in 1m"):
        forecaster.forecast_series(window(1e6 + 60), 5, 0.9, 1e6 + 60)
    assert len(submitted) == 1, "not asked for again at once"
    with pytest.raises(ModelPendingError):
        forecaster.forecast_series(window(1e6 + 120), 5, 0.9, 1e6 + 120)

    assert len(submitted) == 2


def test_failed_selections_back_off_doubling_up_to_the_refresh_period() -> None:
    """A selection that fails on this load must not take a worker at every evaluation."""
    submitted: list[RefreshRequest] = []
    forecaster = ScheduledSelection("holt", refresh_seconds=600, submit=into(submitted))
    now = 1e6
    retried_after: list[float] = []
    for _ in range(6):
        with pytest.raises(ModelPendingError):
            forecaster.forecast_series(window(now), 5, 0.9, now)
        asked = len(submitted)
        forecaster.handover.deliver(RuntimeError("stuck"))
        # The wait counts from the evaluation that learns of the failure.
        now += 30
        with pytest.raises(ModelPendingError, match="stuck"):
            forecaster.forecast_series(window(now), 5, 0.9, now)
        failed_at = now
        while len(submitted) == asked:
            now += 30
            with pytest.raises(ModelPendingError):
                forecaster.forecast_series(window(now), 5, 0.9, now)
        retried_after.append(now - failed_at)

    assert retried_after == [60, 120, 240, 480, 600, 600]
    assert forecaster.handover.failures_in_a_row == 6


def test_a_selection_that_lands_after_failures_resets_the_backoff() -> None:
    submitted: list[RefreshRequest] = []
    forecaster = ScheduledSelection("holt", refresh_seconds=600, submit=into(submitted))
    with pytest.raises(ModelPendingError):
        forecaster.forecast_series(window(1e6), 5, 0.9, 1e6)
    forecaster.handover.deliver(RuntimeError("stuck"))
    with pytest.raises(ModelPendingError):
        forecaster.forecast_series(window(1e6 + 60), 5, 0.9, 1e6 + 60)
    with pytest.raises(ModelPendingError):
        forecaster.forecast_series(window(1e6 + 120), 5, 0.9, 1e6 + 120)  # asked again
    forecaster.handover.deliver(refresh_model(submitted[-1]))
    forecaster.forecast_series(window(1e6 + 150), 5, 0.9, 1e6 + 150)
    assert (forecaster.handover.failure, forecaster.handover.failures_in_a_row) == (None, 0)

    # The next re-selection fails: the model in use goes on, the failure is
    # kept for status, and the wait starts again from a minute.
    forecaster.forecast_series(window(1e6 + 760), 5, 0.9, 1e6 + 760)
    forecaster.handover.deliver(RuntimeError("stuck"))
    forecaster.forecast_series(window(1e6 + 790), 5, 0.9, 1e6 + 790)
    assert forecaster.handover.failure is not None
    assert "1 failure in a row, tried again in 1m" in forecaster.handover.failure
    forecaster.forecast_series(window(1e6 + 820), 5, 0.9, 1e6 + 820)
    assert len(submitted) == 3
    forecaster.forecast_series(window(1e6 + 850), 5, 0.9, 1e6 + 850)
    assert len(submitted) == 4


def test_a_first_selection_may_not_wait_and_a_reselection_may_wait_a_refresh() -> None:
    """An object with no forecast goes before one whose model still serves."""
    submitted: list[RefreshRequest] = []
    waits: list[float] = []
    forecaster = ScheduledSelection("holt", refresh_seconds=600, submit=into(submitted, waits))
    with pytest.raises(ModelPendingError):
        forecaster.forecast_series(window(1e6), 5, 0.9, 1e6)
    forecaster.handover.deliver(RuntimeError("worker died"))
    for now in (1e6 + 60, 1e6 + 120):
        with pytest.raises(ModelPendingError):
            forecaster.forecast_series(window(now), 5, 0.9, now)
    forecaster.handover.deliver(refresh_model(submitted[-1]))
    forecaster.forecast_series(window(1e6 + 180), 5, 0.9, 1e6 + 180)
    forecaster.forecast_series(window(1e6 + 780), 5, 0.9, 1e6 + 780)

    assert waits == [0.0, 0.0, 600.0]


def test_a_selection_that_could_not_be_handed_over_is_asked_for_again() -> None:
    handed: list[RefreshRequest] = []

    def submit(request: RefreshRequest, _deliver: object, _may_wait: float) -> None:
        if not handed:
            handed.append(request)
            raise RuntimeError("the event loop is closed")
        handed.append(request)

    forecaster = ScheduledSelection("holt", submit=submit)
    with pytest.raises(RuntimeError, match="closed"):
        forecaster.forecast_series(window(1e6), 5, 0.9, 1e6)
    assert not forecaster.handover.selecting
    with pytest.raises(ModelPendingError):
        forecaster.forecast_series(window(1e6 + STEP), 5, 0.9, 1e6 + STEP)
    assert len(handed) == 2
    assert forecaster.handover.wants(handed[1])


def test_a_selection_that_comes_back_while_handed_over_forecasts_in_the_same_call() -> None:
    """A worker may answer before submit returns; the call then forecasts with it, as a
    selection run in the call does."""

    def at_once(request: RefreshRequest, deliver: Delivery, _may_wait: float) -> None:
        deliver(refresh_model(request))

    forecaster = ScheduledSelection("holt", submit=at_once)
    forecast = forecaster.forecast_series(window(1e6), 5, 0.9, 1e6)

    assert forecast.mean.shape == (5,)
    assert not forecaster.handover.selecting
    assert forecaster.take_installed() is not None


def test_an_earlier_selection_landing_during_a_call_is_updated_to_its_window(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A re-selection fitted on the window of an hour ago may land while a later call runs:
    the forecast that call makes starts from its own window, not from the selection's."""
    submitted: list[RefreshRequest] = []
    forecaster = ScheduledSelection("holt", refresh_seconds=600, submit=into(submitted))
    with pytest.raises(ModelPendingError):
        forecaster.forecast_series(window(1e6), 5, 0.9, 1e6)
    forecaster.handover.deliver(refresh_model(submitted[0]))
    forecaster.forecast_series(window(1e6 + 30), 5, 0.9, 1e6 + 30)
    forecaster.forecast_series(window(1e6 + 660), 5, 0.9, 1e6 + 660)
    queued = submitted[-1]
    assert len(submitted) == 2

    observe = forecaster.breaks.observe

    def lands_meanwhile(series: np.ndarray, last: int) -> None:
        forecaster.handover.deliver(refresh_model(queued))
        observe(series, last)

    monkeypatch.setattr(forecaster.breaks, "observe", lands_meanwhile)
    moved = SERIES + 200.0
    forecaster.forecast_series(window(1e6 + 720, moved), 5, 0.9, 1e6 + 720)

    assert forecaster.take_installed() is not None
    assert forecaster.fitted is not None
    assert forecaster.fitted.y_[-1] == moved[-1]
