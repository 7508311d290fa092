"""Where the image build keeps its images, and the working containers run from them.

buildah's storage lives in the cache, outside the repository. It is overlay
where the kernel mounts it in the cache's filesystem (probed once), else vfs,
which works anywhere but copies the whole tree at every step: a one-line code
change rebuilt in 24 s on overlay and in 4 minutes on vfs here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from predictive_scaler_dev.localcluster.build import BuildError
from predictive_scaler_dev.localcluster.components import cache_root
from predictive_scaler_dev.localcluster.progress import BuildTimes, Expected

DRIVER_ENV = "PREDICTIVE_SCALER_IMAGE_DRIVER"
DRIVERS = ("overlay", "vfs")
# Cold on the project's two-core machine: the estimate before a first build here.
TYPICAL_SECONDS = {
    ("base", "overlay"): 60.0,
    ("base", "vfs"): 60.0,
    ("image", "overlay"): 120.0,
    ("image", "vfs"): 230.0,
}


@dataclass(frozen=True)
class ImageStore:
    """buildah's storage in the cache: images, layers and working containers."""

    root: Path
    driver: str = "vfs"

    @classmethod
    def default(cls) -> ImageStore:
        """`<cache>/image/<driver>`: `$PREDICTIVE_SCALER_IMAGE_DRIVER`, else what was probed."""
        base = cache_root() / "image"
        driver = os.environ.get(DRIVER_ENV) or storage_driver(base)
        if driver not in DRIVERS:
            raise BuildError(f"{DRIVER_ENV}={driver!r}: use one of {', '.join(DRIVERS)}")
        return cls(base / driver, driver)

    def buildah(self) -> list[str]:
        return [
            "buildah",
            "--root", str(self.root / "storage"),
            "--runroot", str(self.root / "run"),
            "--storage-driver", self.driver,
        ]  # fmt: skip

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    def expected(self, part: str) -> Expected:
        times = BuildTimes(self.root / "build-times.json")
        return times.expected(part, TYPICAL_SECONDS[part, self.driver])

    def record(self, part: str, seconds: float) -> None:
        BuildTimes(self.root / "build-times.json").record(part, seconds)

    def has_image(self, reference: str) -> bool:
        return self._inspect(reference) is not None

    def size(self, reference: str) -> str:
        """The image's size as buildah reports it (uncompressed, e.g. `512 MB`)."""
        listed = subprocess.run(
            [*self.buildah(), "images", "--json", reference],
            capture_output=True,
            text=True,
            check=True,
        )
        entries = json.loads(listed.stdout)
        return str(entries[0]["size"]) if entries else "unknown"

    def _inspect(self, reference: str) -> dict[str, object] | None:
        """The image's OCI config (Entrypoint, Cmd, User, Env, Labels); None when absent."""
        inspected = subprocess.run(
            [*self.buildah(), "inspect", "--type", "image", reference],
            capture_output=True,
            text=True,
            check=False,
        )
        if inspected.returncode != 0:
            return None
        config: dict[str, object] = json.loads(inspected.stdout)["OCIv1"]["config"]
        return config

    def config(self, reference: str) -> dict[str, object]:
        """The image's OCI config; BuildError when there is no such image."""
        found = self._inspect(reference)
        if found is None:
            raise BuildError(f"no image {reference} in {self.root}")
        return found

    def labels(self, reference: str) -> dict[str, str]:
        """The image's labels; none when there is no such image."""
        found = (self._inspect(reference) or {}).get("Labels")
        return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}


def overlay_works(folder: Path) -> bool:
    """Whether buildah can mount an overlay container in `folder`'s filesystem."""
    probe = ImageStore(folder, "overlay")
    folder.mkdir(parents=True, exist_ok=True)
    try:
        made = subprocess.run(
            [*probe.buildah(), "from", "scratch"], capture_output=True, text=True, check=False
        )
        if made.returncode != 0:
            return False
        container = made.stdout.strip()
        mounted = subprocess.run(
            [*probe.buildah(), "mount", container], capture_output=True, check=False
        )
        subprocess.run([*probe.buildah(), "rm", container], capture_output=True, check=False)
        return mounted.returncode == 0
    finally:
        # A probe's storage holds nothing worth keeping.
        subprocess.run(
            ["umount", "--recursive", "--lazy", str(folder / "storage" / "overlay")],
            capture_output=True,
            check=False,
        )
        shutil.rmtree(folder, ignore_errors=True)


def storage_driver(base: Path) -> str:
    """overlay if it works here, else vfs; probed once and remembered in `base/driver`."""
    remembered = base / "driver"
    if remembered.is_file():
        return remembered.read_text().strip()
    driver = "overlay" if shutil.which("buildah") and overlay_works(base / "probe") else "vfs"
    base.mkdir(parents=True, exist_ok=True)
    remembered.write_text(driver + "\n")
    return driver


@dataclass(frozen=True)
class Container:
    """A working container of the image, to run the operator from (`buildah run`)."""

    store: ImageStore
    name: str

    @classmethod
    def create(cls, store: ImageStore, image: str, name: str) -> Container:
        subprocess.run(
            [*store.buildah(), "from", "--pull-never", "--name", name, image],
            capture_output=True,
            check=True,
        )
        return cls(store, name)

    def run_command(
        self,
        command: Sequence[str],
        *,
        env: dict[str, str],
        volumes: Sequence[tuple[Path, str]] = (),
    ) -> list[str]:
        """`buildah run` of `command` as the image's user, sharing this host's network."""
        return [
            *self.store.buildah(),
            "run",
            "--isolation", "chroot",
            *(f"--env={key}={value}" for key, value in env.items()),
            *(f"--volume={source}:{target}:ro" for source, target in volumes),
            self.name,
            "--",
            *command,
        ]  # fmt: skip

    def remove(self) -> None:
        subprocess.run([*self.store.buildah(), "rm", self.name], capture_output=True, check=False)
