"""A load that leaves the forecast's band and stays out has the model selected again at once."""

from __future__ import annotations

import numpy as np
import pytest

from predictive_scaler.forecasting import (
    Forecast,
    ModelPendingError,
    RefreshRequest,
    ScheduledSelection,
    refresh_model,
)
from predictive_scaler.forecasting.breaks import FALSE_ALARM_STEPS, BreakWatch, run_length
from predictive_scaler.forecasting.handover import Delivery
from predictive_scaler.forecasting.seasons import TimedSeries

STEP = 60.0
WINDOW = 240


@pytest.mark.parametrize(("level", "run"), [(0.5, 7), (0.8, 4), (0.9, 3), (0.95, 3), (0.99, 2)])
def test_the_run_is_as_rare_by_chance_at_every_level(level: float, run: int) -> None:
    assert run_length(level) == run
    beyond_one_side = (1.0 - level) / 2.0
    assert beyond_one_side**run <= 1.0 / FALSE_ALARM_STEPS
    # One sample fewer would not be.
    assert beyond_one_side ** (run - 1) > 1.0 / FALSE_ALARM_STEPS


def judged(watch: BreakWatch, samples: list[float], level: float = 0.9) -> list[str | None]:
    """Each sample judged against the band [9, 11] forecast the step before."""
    seen: list[str | None] = []
    for last, sample in enumerate(samples):
        watch.expect(last, 9.0, 11.0)
        watch.observe(np.array([sample]), last + 1)
        seen.append(watch.broken(level))
    return seen


def test_three_samples_above_the_band_make_a_break_and_say_which_side() -> None:
    assert judged(BreakWatch(), [12.0, 12.0, 12.0]) == [None, None, "above"]
    assert judged(BreakWatch(), [10.0, 8.0, 8.5, 7.0]) == [None, None, None, "below"]


def test_a_sample_inside_or_on_the_other_side_ends_the_run() -> None:
    assert judged(BreakWatch(), [12.0, 12.0, 10.0, 12.0]) == [None] * 4
    assert judged(BreakWatch(), [12.0, 12.0, 8.0]) == [None] * 3
    # On the bound is inside.
    assert judged(BreakWatch(), [11.0, 11.0, 11.0]) == [None] * 3


def test_a_lower_level_needs_a_longer_run() -> None:
    assert judged(BreakWatch(), [12.0] * 4, level=0.8) == [None, None, None, "above"]


def test_a_remade_forecast_replaces_the_band_it_remakes() -> None:
    watch = BreakWatch()
    for last in range(3):
        watch.expect(last, 9.0, 11.0)
        watch.expect(last, 9.0, 20.0)  # the same step forecast again, wider
        watch.observe(np.array([12.0]), last + 1)
    assert watch.broken(0.9) is None


def test_samples_judged_are_those_awaited_and_in_the_window() -> None:
    watch = BreakWatch()
    watch.expect(0, 9.0, 11.0)
    watch.observe(np.array([12.0]), 0)  # not yet: the band is for step 1
    watch.observe(np.array([12.0, 12.0]), 1)
    watch.expect(1, 9.0, 11.0)
    watch.expect(2, 9.0, 11.0)
    # Step 2's sample fell out of a one-sample window ending at 3: only step 3 is judged.
    watch.observe(np.array([12.0]), 3)
    assert watch.broken(0.99) == "above"
    watch.reset()
    assert watch.broken(0.99) is None


# Between two hourly selections (at WINDOW + 60 and WINDOW + 120).
SHIFT = WINDOW + 100


def shifted_load(seed: int = 3) -> np.ndarray:
    """Quiet hours at 1 and then 12 (a batch switching on), with a little noise."""
    rng = np.random.default_rng(seed)
    level = np.r_[np.full(SHIFT, 1.0), np.full(60, 12.0)]
    return np.asarray(level + rng.normal(0.0, 0.05, level.size), dtype=np.float64)


def walk(
    forecaster: ScheduledSelection, load: np.ndarray, start: int, until: int
) -> list[Forecast]:
    """The forecaster called once a step, as the operator calls it, from ``start`` to ``until``."""
    made = []
    for t in range(start, until):
        recent = TimedSeries(load[t - WINDOW : t], STEP, (t - 1) * STEP)
        made.append(forecaster.forecast_series(recent, 2, 0.9, t * STEP))
    return made


BROKEN_AT = SHIFT + run_length(0.9)  # the third sample above the band is seen then


def test_a_level_shift_has_the_model_selected_again_within_a_run() -> None:
    load = shifted_load()
    forecaster = ScheduledSelection("auto", refresh_seconds=3600.0)
    before = walk(forecaster, load, WINDOW, SHIFT)
    assert forecaster.take_break() is None, "calm hours make no break"
    assert abs(before[-1].mean[0] - 1.0) < 0.5

    after = walk(forecaster, load, SHIFT, BROKEN_AT + 1)
    assert forecaster.fitted_at == BROKEN_AT * STEP
    message = forecaster.take_break()
    assert message is not None
    assert "above the forecast's 90% band 3 samples in a row" in message
    assert "ahead of its 1h refresh" in message
    assert forecaster.take_break() is None, "said once"
    assert abs(after[-1].mean[0] - 12.0) < 2.0, after[-1].mean


def test_without_a_break_the_fitted_model_trails_the_shift_until_its_refresh(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What the break mends: the same walk with the watch never firing."""
    load = shifted_load()
    forecaster = ScheduledSelection("auto", refresh_seconds=3600.0)
    walk(forecaster, load, WINDOW, SHIFT)
    monkeypatch.setattr(forecaster.breaks, "broken", lambda level: None)
    after = walk(forecaster, load, SHIFT, BROKEN_AT + 1)
    assert forecaster.fitted_at == (WINDOW + 60) * STEP
    assert after[-1].mean[0] < 6.0, after[-1].mean


def test_a_break_asks_for_the_selection_without_waiting_a_refresh() -> None:
    load = shifted_load()
    submitted: list[RefreshRequest] = []
    waits: list[float] = []

    def submit(request: RefreshRequest, _deliver: object, may_wait: float) -> None:
        submitted.append(request)
        waits.append(may_wait)

    forecaster = ScheduledSelection("holt", refresh_seconds=4 * 3600.0, submit=submit)
    with pytest.raises(ModelPendingError):
        walk(forecaster, load, WINDOW, WINDOW + 1)
    forecaster.handover.deliver(refresh_model(submitted[0]))
    walk(forecaster, load, WINDOW + 1, BROKEN_AT + 1)
    assert waits == [0.0, 0.0], "the first selection, then the one the break asks for"
    assert forecaster.handover.selecting
    assert forecaster.take_break() is not None
    # The model in place goes on forecasting meanwhile.
    assert np.isfinite(walk(forecaster, load, BROKEN_AT + 1, BROKEN_AT + 2)[0].mean).all()


def test_a_break_supersedes_a_reselection_queued_on_the_load_before_it() -> None:
    """Busy workers may hold a re-selection for a refresh period; a break does not wait."""
    load = shifted_load()
    asked: list[tuple[RefreshRequest, Delivery, float]] = []

    def submit(request: RefreshRequest, deliver: Delivery, wait: float) -> None:
        asked.append((request, deliver, wait))

    refresh = 60 * STEP
    forecaster = ScheduledSelection("holt", refresh_seconds=refresh, submit=submit)
    with pytest.raises(ModelPendingError):
        walk(forecaster, load, WINDOW, WINDOW + 1)
    forecaster.handover.deliver(refresh_model(asked[0][0]))
    walk(forecaster, load, WINDOW + 1, SHIFT)
    assert [wait for *_, wait in asked] == [0.0, refresh], "the re-selection may wait"
    queued, queued_delivery, _ = asked[1]

    walk(forecaster, load, SHIFT, BROKEN_AT + 1)
    assert [wait for *_, wait in asked] == [0.0, refresh, 0.0]
    urgent, urgent_delivery, _ = asked[2]
    assert not forecaster.handover.wants(queued)
    assert forecaster.handover.wants(urgent)
    # The superseded one, had it run, is dropped; the break's own is installed.
    queued_delivery(refresh_model(queued))
    walk(forecaster, load, BROKEN_AT + 1, BROKEN_AT + 2)
    assert forecaster.fitted_at == WINDOW * STEP
    urgent_delivery(refresh_model(urgent))
    after = walk(forecaster, load, BROKEN_AT + 2, BROKEN_AT + 3)
    assert forecaster.fitted_at == BROKEN_AT * STEP
    assert after[0].mean[0] > 10.0, after[0].mean
