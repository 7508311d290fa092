"""A clone of the repository alone runs every command: nothing reads files beside it.

The developers keep design notes and the public traces in a folder next to the
checkout; users who clone the repository have no such folder. So no file the
project runs may name it: the traces the tests and benchmarks replay live in
`traces/`, the design notes in `docs/`.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# Built, cached or generated: not part of what a clone holds.
NOT_THE_PROJECT = {
    ".git",
    ".venv",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    ".hypothesis",
    ".import_linter_cache",
    "__pycache__",
    "build",
    "dist",
    "predictive-scaler-demo",
}
# The developers' folder, spelt in pieces so that this file, checked too, does not name it.
SHARED = "shared"
PARENT = ".."
# The parent folder joined to it by a slash, by a comma in os.path.join, by pathlib's `/`
# on either side: the ways a path to a sibling folder gets written.
SIBLING_FOLDER = re.compile(
    r"\.\.[/\\]shared\b"
    r"|['\"]\.\.['\"]\s*,\s*['\"]shared['\"]"
    r"|/\s*['\"]shared['\"]"
    r"|['\"]shared['\"]\s*/"
)


def project_files() -> list[Path]:
    found = []
    for path in REPO.rglob("*"):
        relative = path.relative_to(REPO)
        if any(part in NOT_THE_PROJECT or part.endswith(".egg-info") for part in relative.parts):
            continue
        if path.is_file() and not path.name.endswith((".gz", ".png")):
            found.append(path)
    return found


def test_the_walk_sees_the_code_the_project_runs() -> None:
    names = {str(path.relative_to(REPO)) for path in project_files()}
    assert {"Makefile", ".ci/run", "hack/cluster", "tests/conftest.py", "Dockerfile"} <= names
    assert any(name.startswith("benchmarks/") for name in names)
    assert any(name.startswith("src/predictive_scaler/") for name in names)


@pytest.mark.parametrize(
    "line",
    [
        f"see {PARENT}/{SHARED}/traces",
        f'Path(__file__).resolve().parents[1].parent / "{SHARED}" / "traces"',
        f"os.path.join(root, '{PARENT}', '{SHARED}')",
        f"cat {PARENT}\\{SHARED}\\design.md",
    ],
)
def test_the_pattern_catches_every_way_of_naming_the_sibling_folder(line: str) -> None:
    assert SIBLING_FOLDER.search(line)


def test_no_file_names_a_folder_beside_the_clone() -> None:
    offending = []
    for path in project_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            if SIBLING_FOLDER.search(line):
                offending.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert not offending, "\n".join(offending)


def test_every_trace_in_traces_is_compressed_and_attributed() -> None:
    traces = sorted((REPO / "traces").glob("*"))
    data = [path for path in traces if path.name != "README.md"]
    assert data, "traces/ holds the public traces"
    assert all(path.name.endswith(".csv.gz") for path in data), data
    readme = (REPO / "traces" / "README.md").read_text(encoding="utf-8")
    for path in data:
        assert f"`{path.name}`" in readme, f"{path.name} has no source and licence line"
