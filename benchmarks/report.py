"""What every benchmark needs to write its section of BENCHMARKS.md.

A benchmark renders its section as markdown with these helpers and hands it to
``write_section``, which keeps every other benchmark's section as it is.
"""

from __future__ import annotations

import math
import os
import platform
import sys
import time
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

RUN_STARTED = time.perf_counter()
REPO_ROOT = Path(__file__).resolve().parents[1]
# The public traces the benchmarks replay, kept compressed in the repository.
REPO_TRACES = REPO_ROOT / "traces"
INTRO = (
    "# Benchmarks\n\nFigures measured on real load traces. Each section is written by a "
    "script in `benchmarks/` between its markers; rerun the script to refresh it.\n\n"
)


def progress(stage: str, done: int, total: int) -> None:
    """Overwrite one stderr line with the stage's count; a new line once the stage is done."""
    end = "\n" if done == total else ""
    elapsed = time.perf_counter() - RUN_STARTED
    print(f"\r[{elapsed:5.0f} s] {stage}: {done}/{total}", end=end, file=sys.stderr, flush=True)


def format_seconds(seconds: float) -> str:
    if math.isnan(seconds):
        return "n/a"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs"
    if seconds < 1.0:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def machine_description() -> str:
    return f"{platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"


def package_versions(names: Sequence[str]) -> str:
    """Installed version of each package, so a figure can be traced to what produced it."""
    found = []
    for name in names:
        try:
            found.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            found.append(f"{name} (not installed)")
    return ", ".join(found)


def write_section(path: Path, name: str, section: str) -> None:
    """Replace the section between ``name``'s markers, keeping the rest of the file."""
    start_marker = f"<!-- {name}:start -->"
    end_marker = f"<!-- {name}:end -->"
    block = f"{start_marker}\n{section}{end_marker}\n"
    if not path.exists():
        path.write_text(INTRO + block, encoding="utf-8")
        return
    text = path.read_text(encoding="utf-8")
    if start_marker in text and end_marker in text:
        before, rest = text.split(start_marker, 1)
        after = rest.split(end_marker, 1)[1].removeprefix("\n")
        path.write_text(before + block + after, encoding="utf-8")
    else:
        path.write_text(text.rstrip("\n") + "\n\n" + block, encoding="utf-8")
