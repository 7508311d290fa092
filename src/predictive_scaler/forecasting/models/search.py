"""Structure search by information criterion, shared by the statsmodels-backed models."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import numpy as np

Structure = TypeVar("Structure")


def lowest_criterion(
    structures: Iterable[Structure], fit: Callable[[Structure], Any], criterion: str
) -> tuple[float, Structure, Any]:
    """Fit each structure and keep the one with the lowest finite ``criterion``.

    A structure statsmodels cannot fit (singular, non-stationary start) is
    skipped; ValueError when none fits, which the base class turns into the
    naive fallback.
    """
    best: tuple[float, Structure, Any] | None = None
    for structure in structures:
        try:
            results = fit(structure)
        except (ValueError, np.linalg.LinAlgError):
            continue
        score = float(getattr(results, criterion))
        if np.isfinite(score) and (best is None or score < best[0]):
            best = (score, structure, results)
    if best is None:
        raise ValueError(f"no candidate structure could be fitted ({criterion})")
    return best
