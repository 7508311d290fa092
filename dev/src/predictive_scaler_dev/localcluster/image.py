"""Build the operator image without a container daemon.

`buildah` builds the repository's Dockerfile with `--isolation chroot` (no
daemon, no user namespaces) on a base that `mmdebstrap` makes from Debian's
packages, so no image registry is involved. Both tools come from Debian and are
installed with apt when missing, as Prometheus is.

Where images are kept, and the containers the operator runs in: :mod:`.image_store`.

Everything is cached under `<cache>/image/<driver>`, outside the repository: the
base is tagged with a hash of what makes it (suite, packages, mirrors,
exclusions); buildah's layer cache keys every later step by its instruction and
the content it copies; and the image carries a hash of all it is built from.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from predictive_scaler_dev.localcluster.build import BuildError, BuildLog, install_debian_package
from predictive_scaler_dev.localcluster.image_store import ImageStore
from predictive_scaler_dev.localcluster.progress import BuildProgress

DEBIAN_SUITE = "bookworm"
BASE_PACKAGES = ("python3", "python3-venv", "ca-certificates")
MIRROR_ENV = "PREDICTIVE_SCALER_DEBIAN_MIRROR"
DEFAULT_MIRROR = "http://deb.debian.org/debian"
# Documentation, manuals and translations are a fifth of a minimal Debian; the
# copyright files stay, as Debian's licences ask.
DPKG_OPTIONS = (
    "path-exclude=/usr/share/man/*",
    "path-exclude=/usr/share/info/*",
    "path-exclude=/usr/share/locale/*",
    "path-exclude=/usr/share/doc/*",
    "path-include=/usr/share/doc/*/copyright",
)
BASE_NAME = "localhost/predictive-scaler-base"
# Where the image's own build trusts what this machine trusts (a TLS-inspecting
# proxy's certificate, for instance): mounted into the build steps only, never
# part of a layer.
HOST_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
# buildah's line as it starts a Dockerfile step: `[1/2] STEP 3/7: RUN ...`.
STEP_LINE = re.compile(r"STEP \d+/\d+: ")
INSTRUCTION = re.compile(r"^\s*([A-Za-z]+)\b")
# The hash of everything that goes into the image, as a label on it: even a fully
# cached `buildah build` takes 17 s on overlay and minutes on vfs, so an image
# whose inputs have not changed is not handed to buildah at all.
INPUTS_LABEL = "io.predictive-scaler.inputs"
# What the Dockerfile copies (and .dockerignore lets through).
CONTEXT = ("Dockerfile", ".dockerignore", "pyproject.toml", "README.md", "src")


@dataclass(frozen=True)
class BuiltImage:
    reference: str
    base: str
    size: str
    seconds: float


def chart_image(repo: Path) -> str:
    """`repository:appVersion`: the image the Helm chart installs by default."""
    chart = repo / "charts" / "predictive-scaler"
    values = yaml.safe_load((chart / "values.yaml").read_text())
    meta = yaml.safe_load((chart / "Chart.yaml").read_text())
    return f"{values['image']['repository']}:{meta['appVersion']}"


def mirrors() -> list[str]:
    """Debian's main archive and its security archive, so the base has today's fixes."""
    main = os.environ.get(MIRROR_ENV, DEFAULT_MIRROR).rstrip("/")
    security = main.removesuffix("/debian") + "/debian-security"
    return [
        f"deb {main} {DEBIAN_SUITE} main",
        f"deb {main} {DEBIAN_SUITE}-updates main",
        f"deb {security} {DEBIAN_SUITE}-security main",
    ]


def mmdebstrap_command(output: Path) -> list[str]:
    return [
        "mmdebstrap",
        "--variant=minbase",
        "--include=" + ",".join(BASE_PACKAGES),
        *(f"--dpkgopt={option}" for option in DPKG_OPTIONS),
        DEBIAN_SUITE,
        str(output),
        *mirrors(),
    ]


def base_reference() -> str:
    """The base's tag: a hash of the command that makes it, so a change makes a new one."""
    recipe = "\n".join(mmdebstrap_command(Path("base.tar")))
    return f"{BASE_NAME}:{hashlib.sha256(recipe.encode()).hexdigest()[:16]}"


def install_tools(progress: BuildProgress) -> None:
    for package in ("buildah", "mmdebstrap"):
        install_debian_package(package, package, progress)


def ensure_base(store: ImageStore, progress: BuildProgress, *, refresh: bool = False) -> str:
    """The Debian base in buildah's storage, made by mmdebstrap when it is not there yet."""
    reference = base_reference()
    if not refresh and store.has_image(reference):
        return reference
    store.logs.mkdir(parents=True, exist_ok=True)
    build_log = BuildLog(store.logs / "base.log")
    build_log.path.write_text(f"# {reference}\n", encoding="utf-8")
    label = f"image base: Debian {DEBIAN_SUITE} with {', '.join(BASE_PACKAGES)}"
    env = dict(os.environ)
    started = time.monotonic()
    with (
        progress.component(label, store.expected("base")) as shown,
        tempfile.TemporaryDirectory(dir=store.root) as scratch,
    ):
        tarball = Path(scratch) / "base.tar"
        shown.phase("mmdebstrap: downloading and unpacking Debian's packages")
        build_log.capture(mmdebstrap_command(tarball), cwd=Path(scratch), env=env)
        shown.phase("importing into buildah's storage")
        container = build_log.capture(
            [*store.buildah(), "from", "scratch"], cwd=Path(scratch), env=env
        ).strip()
        try:
            build_log.capture(
                [*store.buildah(), "add", container, str(tarball), "/"], cwd=Path(scratch), env=env
            )
            build_log.capture(
                [*store.buildah(), "commit", "--rm", container, reference],
                cwd=Path(scratch),
                env=env,
            )
        except BuildError:
            subprocess.run([*store.buildah(), "rm", container], capture_output=True, check=False)
            raise
    store.record("base", time.monotonic() - started)
    return reference


def context_files(repo: Path) -> list[Path]:
    found: list[Path] = []
    for name in CONTEXT:
        path = repo / name
        candidates = sorted(path.rglob("*")) if path.is_dir() else [path]
        found += [
            file
            for file in candidates
            if file.is_file()
            and "__pycache__" not in file.parts
            and not any(part.endswith(".egg-info") for part in file.parts)
        ]
    return found


def inputs_digest(repo: Path, base: str) -> str:
    digest = hashlib.sha256(base.encode())
    for file in context_files(repo):
        digest.update(str(file.relative_to(repo)).encode() + b"\0")
        digest.update(file.read_bytes())
    return digest.hexdigest()


def dockerfile_steps(text: str) -> int:
    """The STEP lines buildah prints for this Dockerfile: one per instruction from the first
    FROM on (continuation and comment lines are none), and the label it adds at the end."""
    steps = 0
    continued = False
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        found = None if continued else INSTRUCTION.match(line)
        continued = stripped.endswith("\\")
        if found is None:
            continue
        if steps or found.group(1).upper() == "FROM":
            steps += 1
    return steps + 1


def build_command(store: ImageStore, repo: Path, base: str, tag: str, inputs: str) -> list[str]:
    volumes = [f"{HOST_CA_BUNDLE}:{HOST_CA_BUNDLE}:ro"] if HOST_CA_BUNDLE.is_file() else []
    return [
        *store.buildah(),
        "build",
        "--isolation", "chroot",
        "--layers",
        "--build-arg", f"BASE={base}",
        "--label", f"{INPUTS_LABEL}={inputs}",
        *(f"--volume={volume}" for volume in volumes),
        "--file", str(repo / "Dockerfile"),
        "--tag", tag,
        str(repo),
    ]  # fmt: skip


def build_image(
    repo: Path,
    store: ImageStore | None = None,
    progress: BuildProgress | None = None,
    *,
    refresh_base: bool = False,
) -> BuiltImage:
    """Build the repository's Dockerfile into the chart's image name; cached steps are reused."""
    progress = progress or BuildProgress()
    started = time.monotonic()
    if shutil.which("buildah") is None or shutil.which("mmdebstrap") is None:
        install_tools(progress)
    store = store or ImageStore.default()
    store.root.mkdir(parents=True, exist_ok=True)
    base = ensure_base(store, progress, refresh=refresh_base)
    tag = chart_image(repo)
    inputs = inputs_digest(repo, base)
    if store.labels(tag).get(INPUTS_LABEL) == inputs:
        progress.say(f"image {tag}: up to date (Dockerfile, pyproject.toml, src/ unchanged)")
        return BuiltImage(tag, base, store.size(tag), time.monotonic() - started)
    build_log = BuildLog(store.logs / "image.log")
    build_log.path.write_text(f"# {tag} on {base}\n", encoding="utf-8")
    steps = dockerfile_steps((repo / "Dockerfile").read_text())
    image_started = time.monotonic()
    with progress.component(f"image {tag}", store.expected("image")) as shown:
        shown.phase("Dockerfile steps", total=steps)

        def on_line(line: str) -> None:
            if STEP_LINE.search(line):
                shown.advance()

        build_log.stream(
            build_command(store, repo, base, tag, inputs),
            cwd=repo,
            env=dict(os.environ),
            on_line=on_line,
        )
    store.record("image", time.monotonic() - image_started)
    return BuiltImage(tag, base, store.size(tag), time.monotonic() - started)
