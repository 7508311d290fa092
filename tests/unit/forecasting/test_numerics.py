"""model_numerics: one BLAS thread and no warnings while a model computes, set once when nested."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from predictive_scaler.forecasting import numerics
from predictive_scaler.forecasting.numerics import model_numerics


class CountingPools:
    """Stands in for threadpoolctl's controller: counts the limits set and held."""

    def __init__(self) -> None:
        self.set = 0
        self.held = 0

    @contextmanager
    def limit(self, limits: int) -> Iterator[None]:
        assert limits == 1
        self.set += 1
        self.held += 1
        try:
            yield
        finally:
            self.held -= 1


@pytest.fixture
def pools(monkeypatch: pytest.MonkeyPatch) -> CountingPools:
    counting = CountingPools()
    monkeypatch.setattr(numerics, "_thread_pools", lambda: counting)
    return counting


def test_a_nested_call_keeps_the_outer_limit_without_setting_it_again(pools: CountingPools) -> None:
    with model_numerics():
        with model_numerics(), model_numerics(limit_threads=False):
            assert pools.held == 1
        assert pools.held == 1
    assert (pools.set, pools.held) == (1, 0)


def test_a_limit_asked_for_inside_a_call_without_one_is_set(pools: CountingPools) -> None:
    with model_numerics(limit_threads=False):
        assert pools.held == 0
        with model_numerics():
            assert pools.held == 1
        assert pools.held == 0
    with model_numerics():
        assert pools.held == 1
    assert pools.set == 2


def test_warnings_are_quiet_inside_nested_calls_and_heard_after(pools: CountingPools) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with model_numerics(), model_numerics():
            warnings.warn("inside", RuntimeWarning, stacklevel=1)
        warnings.warn("after", RuntimeWarning, stacklevel=1)
    assert [str(warning.message) for warning in caught] == ["after"]
