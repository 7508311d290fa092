"""Named points where a test may make the operator die, as a crash there would.

`PREDICTIVE_SCALER_FAILPOINTS="scale:after-patch=0.5,evict:after=1"` makes the
process exit at once (no clean-up, like SIGKILL) with probability 0.5 each
time it reaches `scale:after-patch`, and always at `evict:after`. Unset, every
point is a dictionary lookup. This is how the crash tests hit the narrow gaps
between a decision and its record that a random kill would rarely find.
"""

from __future__ import annotations

import os
import random
import sys

VARIABLE = "PREDICTIVE_SCALER_FAILPOINTS"
EXIT_CODE = 86
POINTS = frozenset(
    {
        "scale:before-patch",  # the intent is recorded, the replicas are not patched yet
        "scale:after-patch",  # patched, the cool-down is not recorded yet
        "evict:before",  # the cool-down stamps are written, the pod is not evicted yet
        "evict:after",  # evicted, the next move of the plan not made yet
    }
)


def _parse(text: str) -> dict[str, float]:
    chances = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, _, chance = item.partition("=")
        if name not in POINTS:
            raise ValueError(f"{VARIABLE}: unknown point {name!r}; known: {sorted(POINTS)}")
        chances[name] = float(chance or 1)
    return chances


_CHANCES = _parse(os.environ.get(VARIABLE, ""))


def reach(point: str) -> None:
    if point not in POINTS:
        raise ValueError(f"no failpoint {point!r}")
    chance = _CHANCES.get(point)
    if chance is not None and random.random() < chance:
        sys.stderr.write(f"failpoint {point}: exiting\n")
        sys.stderr.flush()
        os._exit(EXIT_CODE)
