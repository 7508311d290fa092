"""The made-up loads of the shapes benchmark: the same every run, and each the shape it says."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.scaling_shapes import DAY, HEADER, SHAPES, STEPS, render, shape_load


@pytest.mark.parametrize("name", list(SHAPES))
def test_every_shape_is_three_days_the_same_every_run_and_never_negative(name: str) -> None:
    load = shape_load(name)
    assert load.shape == (STEPS,)
    np.testing.assert_array_equal(load, shape_load(name))
    seen = load[np.isfinite(load)]
    assert seen.size > 0.9 * STEPS
    assert (seen >= 0).all()


def test_the_shapes_are_what_they_say() -> None:
    step = shape_load("level step")
    assert step[: STEPS // 2].mean() == pytest.approx(5.0, abs=0.1)
    assert step[STEPS // 2 :].mean() == pytest.approx(15.0, abs=0.1)
    on_off = shape_load("on and off")
    assert on_off[:360].mean() == pytest.approx(1.0, abs=0.1)
    assert on_off[360:720].mean() == pytest.approx(12.0, abs=0.1)
    night = shape_load("zero at night")
    assert (night[DAY // 2 + 10 : DAY - 10] == 0).all()
    assert np.isnan(shape_load("gaps")).mean() > 0.05
    assert shape_load("huge unit").mean() > 1e6


def test_the_report_has_a_row_per_shape() -> None:
    assert not any("|" in what for what, _ in SHAPES.values()), "a | would split a cell"
    rows = [[name, SHAPES[name][0], *["1"] * (len(HEADER) - 2)] for name in SHAPES]
    report = render(rows, 60.0)
    assert report.startswith("## Scaling on shapes no trace holds")
    assert sum(line.startswith("| ") for line in report.splitlines()) == len(SHAPES) + 1
