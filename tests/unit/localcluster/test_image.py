"""What the image build decides before it runs buildah: its steps, its name, its cache keys."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from predictive_scaler_dev.localcluster.build import BuildError
from predictive_scaler_dev.localcluster.image import (
    MIRROR_ENV,
    base_reference,
    chart_image,
    dockerfile_steps,
    inputs_digest,
    mmdebstrap_command,
)
from predictive_scaler_dev.localcluster.image_store import DRIVER_ENV, ImageStore, storage_driver

REPO = Path(__file__).resolve().parents[3]


def test_steps_count_instructions_from_the_first_from_and_the_label_buildah_adds() -> None:
    text = """# comment
ARG BASE=x
FROM ${BASE} AS one
RUN a \\
    && b \\
RUN-looking continuation
COPY x /y

FROM ${BASE}
COPY --from=one /y /y
ENTRYPOINT ["z"]
"""
    assert dockerfile_steps(text) == 3 + 3 + 1


def test_the_repositorys_dockerfile_has_the_steps_buildah_prints() -> None:
    # Two stages: FROM, COPY, RUN; then FROM, RUN, COPY, ENV, ENTRYPOINT, CMD, COPY, COPY, RUN,
    # USER.
    assert dockerfile_steps((REPO / "Dockerfile").read_text()) == 3 + 10 + 1


def test_the_image_is_the_one_the_chart_installs() -> None:
    assert chart_image(REPO) == "ghcr.io/predictive-scaler/operator:0.1.0"


def test_the_base_is_keyed_by_its_recipe(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(MIRROR_ENV, raising=False)
    default = base_reference()
    assert default == base_reference()
    command = mmdebstrap_command(Path("out.tar"))
    assert "--variant=minbase" in command
    assert "deb http://deb.debian.org/debian-security bookworm-security main" in command
    monkeypatch.setenv(MIRROR_ENV, "http://mirror.example/debian")
    assert base_reference() != default


def test_the_inputs_hash_follows_the_source_and_ignores_bytecode(tmp_path: Path) -> None:
    copy = tmp_path / "repo"
    copy.mkdir()
    for name in ("Dockerfile", ".dockerignore", "pyproject.toml", "README.md"):
        shutil.copyfile(REPO / name, copy / name)
    module = copy / "src" / "predictive_scaler" / "x.py"
    module.parent.mkdir(parents=True)
    module.write_text("A = 1\n")
    before = inputs_digest(copy, "base:1")
    cache = module.parent / "__pycache__"
    cache.mkdir()
    (cache / "x.cpython-311.pyc").write_bytes(b"\0")
    assert inputs_digest(copy, "base:1") == before
    assert inputs_digest(copy, "base:2") != before
    module.write_text("A = 2\n")
    assert inputs_digest(copy, "base:1") != before


def test_the_storage_driver_is_probed_once_and_can_be_forced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PREDICTIVE_SCALER_CACHE", str(tmp_path))
    (tmp_path / "image").mkdir()
    (tmp_path / "image" / "driver").write_text("vfs\n")
    monkeypatch.delenv(DRIVER_ENV, raising=False)
    assert storage_driver(tmp_path / "image") == "vfs"
    assert ImageStore.default() == ImageStore(tmp_path / "image" / "vfs", "vfs")
    monkeypatch.setenv(DRIVER_ENV, "overlay")
    assert ImageStore.default() == ImageStore(tmp_path / "image" / "overlay", "overlay")
    assert "--storage-driver" in ImageStore.default().buildah()
    monkeypatch.setenv(DRIVER_ENV, "zfs")
    with pytest.raises(BuildError, match="PREDICTIVE_SCALER_IMAGE_DRIVER='zfs': use one of"):
        ImageStore.default()
