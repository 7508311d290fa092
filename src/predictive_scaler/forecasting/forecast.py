"""The value every model returns, and what every caller may rely on."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class Forecast:
    """A forecast of ``h`` steps with its prediction interval at ``level``.

    Invariants, checked on construction so no caller has to re-check them:
    the three arrays have one length ``h >= 1``, are finite, and
    ``lower <= mean <= upper`` element-wise. The arrays are made read-only so
    a frozen Forecast really cannot change.
    """

    model: str
    mean: FloatArray
    lower: FloatArray
    upper: FloatArray
    level: float
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        arrays = []
        for name in ("mean", "lower", "upper"):
            values = np.array(getattr(self, name), dtype=np.float64)
            if values.ndim != 1:
                raise ValueError(f"Forecast.{name} must be one-dimensional")
            values.setflags(write=False)
            object.__setattr__(self, name, values)
            arrays.append(values)
        mean, lower, upper = arrays
        if not len(mean) == len(lower) == len(upper) or len(mean) == 0:
            raise ValueError("Forecast.mean, lower and upper must share one length >= 1")
        if not (np.isfinite(mean).all() and np.isfinite(lower).all() and np.isfinite(upper).all()):
            raise ValueError("Forecast values must be finite")
        if np.any(lower > mean) or np.any(mean > upper):
            raise ValueError("Forecast must satisfy lower <= mean <= upper")
        if not 0.0 < self.level < 1.0:
            raise ValueError(f"Forecast.level must lie in (0, 1), got {self.level}")

    @property
    def horizon(self) -> int:
        return len(self.mean)
