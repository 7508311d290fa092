"""Structure search by information criterion, shared by the statsmodels-backed models."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import numpy as np

Structure = TypeVar("Structure")


def lowest_criterion(
    structures: Iterable[Structure],
    fit: Callable[[Structure], Any],
    criterion: str,
    score: Callable[[Any], float] | None = None,
) -> tuple[float, Structure, Any]:
    """Fit each structure and keep the one with the lowest finite ``criterion``.

    ``score`` reads the criterion from what ``fit`` returned (by default its
    ``criterion`` attribute, as statsmodels' results carry it). A structure
    statsmodels cannot fit or score (singular, non-stationary start) is
    skipped; ValueError when none fits, which the base class turns into the
    naive fallback.
    """
    best: tuple[float, Structure, Any] | None = None
    for structure in structures:
        try:
            results = fit(structure)
            value = None if score is None else score(results)
        except (ValueError, np.linalg.LinAlgError):
            continue
        if value is None:
            value = float(getattr(results, criterion))
        if np.isfinite(value) and (best is None or value < best[0]):
            best = (value, structure, results)
    if best is None:
        raise ValueError(f"no candidate structure could be fitted ({criterion})")
    return best
