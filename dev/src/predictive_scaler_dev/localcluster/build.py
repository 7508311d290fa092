"""Build the control plane's binaries from the Go module proxy, and install Prometheus.

Each Go component gets a small builder module of its own in the cache. Kubernetes
needs one more step: `k8s.io/kubernetes` points its staging modules
(`k8s.io/api`, `k8s.io/client-go`, ...) at `./staging/src/...` through replace
directives, which Go ignores in a dependency, so the builder must replace each
of them with its published `v0.<minor>.<patch>` release. The list is read from
the release's own go.mod, never typed by hand.

A cold build takes minutes per component, so it says what it is doing all along
(`progress.BuildProgress`): the component, the phase, packages compiled out of
all of them, the time so far and the time left. Every command's output goes to
one log per component; a failure shows its last lines and where the log is.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from predictive_scaler_dev.localcluster.components import (
    GO_BUILDS,
    KUBERNETES,
    Binaries,
    GoBuild,
    cache_root,
)
from predictive_scaler_dev.localcluster.progress import BuildProgress, BuildTimes, ComponentProgress

log = logging.getLogger(__name__)

PROMETHEUS_PACKAGE = "prometheus"
FAILURE_TAIL_LINES = 30
_STAGING_REPLACE = re.compile(r"^\s*(k8s\.io/[\w.-]+)\s*=>\s*\./staging/src/\1\s*$", re.MULTILINE)
# `replace old => new vX` (one line or inside a block) naming a published module,
# not a local folder: a dependency's replaces are ignored, so the builder repeats them.
_VERSIONED_REPLACE = re.compile(
    r"^\s*(?:replace\s+)?([\w./~-]+(?:\s+v\S+)?\s*=>\s*[\w.~-]+\.[\w./~-]+\s+v\S+)\s*$",
    re.MULTILINE,
)
_GO_DIRECTIVE = re.compile(r"^go (\d+\.\d+)", re.MULTILINE)


class BuildError(RuntimeError):
    """A component could not be built or installed; the message says which and why."""


@dataclass(frozen=True)
class BuildReport:
    built: tuple[str, ...]
    reused: tuple[str, ...]
    seconds: float


def _run(
    command: Sequence[str], *, cwd: Path | None = None, env: dict[str, str] | None = None
) -> str:
    log.debug("running %s", " ".join(command))
    completed = subprocess.run(
        list(command), cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    if completed.returncode != 0:
        tail = "\n".join((completed.stdout + completed.stderr).strip().splitlines()[-30:])
        raise BuildError(f"`{' '.join(command)}` failed with exit {completed.returncode}:\n{tail}")
    return completed.stdout


@dataclass(frozen=True)
class BuildLog:
    """Every command of one component's build, and all it printed, in one file."""

    path: Path

    def _header(self, command: Sequence[str]) -> None:
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(f"$ {' '.join(command)}\n")

    def _failed(self, command: Sequence[str], code: int) -> BuildError:
        lines = self.path.read_text(encoding="utf-8", errors="replace").splitlines()
        tail = "\n".join(lines[-FAILURE_TAIL_LINES:])
        return BuildError(
            f"`{' '.join(command)}` failed with exit {code}; its last lines:\n{tail}\n"
            f"full log: {self.path}"
        )

    def capture(self, command: Sequence[str], *, cwd: Path, env: dict[str, str]) -> str:
        """Run; return what it printed on stdout (logged too), its stderr into the log."""
        self._header(command)
        with self.path.open("a", encoding="utf-8") as handle:
            completed = subprocess.run(
                list(command), cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=handle,
                text=True, check=False,
            )  # fmt: skip
            handle.write(completed.stdout)
        if completed.returncode != 0:
            raise self._failed(command, completed.returncode)
        return completed.stdout

    def stream(
        self,
        command: Sequence[str],
        *,
        cwd: Path,
        env: dict[str, str],
        on_line: Callable[[str], None],
    ) -> None:
        """Run; hand every line it prints to `on_line` as it comes, and log it."""
        self._header(command)
        with (
            self.path.open("a", encoding="utf-8") as handle,
            subprocess.Popen(
                list(command),
                cwd=cwd,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            ) as process,  # fmt: skip
        ):
            assert process.stdout is not None
            for line in process.stdout:
                handle.write(line)
                on_line(line.rstrip("\n"))
        if process.returncode != 0:
            raise self._failed(command, process.returncode)


def go_environment(root: Path) -> dict[str, str]:
    """The machine's Go, never a downloaded toolchain; build cache kept beside the binaries."""
    env = dict(os.environ)
    env.update(
        GOTOOLCHAIN="local",
        GOFLAGS="-mod=mod -trimpath -buildvcs=false",
        CGO_ENABLED="0",
        GOCACHE=str(root / "go-build"),
    )
    return env


def local_go_version(env: dict[str, str]) -> str:
    if shutil.which("go", path=env.get("PATH")) is None:
        raise BuildError("`go` is not on PATH; install Go 1.26 or newer (Debian: golang)")
    return _run(["go", "env", "GOVERSION"], env=env).strip().removeprefix("go")


def _version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version)[:3])


def require_go(needed: str, local: str, build: GoBuild) -> None:
    # GOTOOLCHAIN=local forbids downloading a newer Go, so say plainly what is missing.
    if _version_tuple(local) < _version_tuple(needed):
        raise BuildError(
            f"{build.key} needs Go {needed} or newer; this machine has Go {local} "
            "(install a newer Go, or pin an older release in localcluster/components.py)"
        )


def staging_replacements(kubernetes_go_mod: str, version: str) -> list[str]:
    """`k8s.io/X => k8s.io/X v0.M.P` for every staging module the release's go.mod names."""
    modules = _STAGING_REPLACE.findall(kubernetes_go_mod)
    if not modules:
        raise BuildError("found no staging replace directives in k8s.io/kubernetes's go.mod")
    staging_version = "v0." + version.lstrip("v").split(".", 1)[1]
    return [f"{module} => {module} {staging_version}" for module in sorted(modules)]


def versioned_replacements(go_mod: str) -> list[str]:
    """The module's own replace directives that point at a published version.

    descheduler pins kube-openapi this way; without the same replace in the
    builder, Go picks the version its requirements name and the build breaks.
    """
    return [" ".join(match.split()) for match in _VERSIONED_REPLACE.findall(go_mod)]


def builder_go_mod(build: GoBuild, go_version: str, replacements: Sequence[str] = ()) -> str:
    lines = [
        f"// Generated by predictive-scaler's local cluster build for {build.key}.",
        f"module predictive-scaler.local/build/{build.name}",
        "",
        f"go {go_version}",
        "",
        f"require {build.module} {build.version}",
    ]
    if replacements:
        lines += ["", "replace (", *(f"\t{line}" for line in replacements), ")"]
    return "\n".join(lines) + "\n"


def _download(
    module: str, version: str, env: dict[str, str], workdir: Path, build_log: BuildLog
) -> tuple[str, Path]:
    """The module's go.mod text and its extracted source folder in the module cache."""
    info = json.loads(
        build_log.capture(
            ["go", "mod", "download", "-json", f"{module}@{version}"], cwd=workdir, env=env
        )
    )
    return Path(info["GoMod"]).read_text(), Path(info["Dir"])


def build_component(
    build: GoBuild, root: Path, env: dict[str, str], shown: ComponentProgress
) -> None:
    builder = root / "build" / build.key
    builder.mkdir(parents=True, exist_ok=True)
    build_log = BuildLog(log_path(root, build))
    build_log.path.write_text(f"# build of {build.key}\n", encoding="utf-8")
    shown.phase(f"downloading {build.module} {build.version}")
    upstream_go_mod, source = _download(build.module, build.version, env, builder, build_log)
    go_directive = _GO_DIRECTIVE.search(upstream_go_mod)
    go_version = go_directive.group(1) if go_directive else "1.22"
    require_go(go_version, local_go_version(env), build)
    replacements = (
        staging_replacements(upstream_go_mod, build.version)
        if build is KUBERNETES
        else versioned_replacements(upstream_go_mod)
    )
    (builder / "go.mod").write_text(builder_go_mod(build, go_version, replacements))
    (builder / "go.sum").unlink(missing_ok=True)
    # Listing every package the binaries need downloads the modules they come
    # from, and its count is what `go build -v` counts up to (one line per
    # package it compiles).
    shown.phase("downloading the modules it needs")
    packages = build_log.capture(["go", "list", "-deps", *build.packages], cwd=builder, env=env)
    # Built into a temporary folder and renamed at the end, so an interrupted
    # build never leaves a half set of binaries that looks complete.
    target = root / "bin" / build.key
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    # A single package is built to its file name: Go would name etcd's module
    # root "server" (its path without the major-version suffix).
    output = partial / build.binaries_named()[0] if len(build.packages) == 1 else f"{partial}/"
    command = ["go", "build", "-v", "-o", str(output)]
    if build.ldflags:
        command.append("-ldflags=-s -w " + " ".join(build.ldflags))
    else:
        command.append("-ldflags=-s -w")
    shown.phase("compiling packages", total=len(packages.split()))
    build_log.stream(
        [*command, *build.packages], cwd=builder, env=env, on_line=lambda _: shown.advance()
    )
    for release_file in build.release_files:
        shutil.copyfile(source / release_file, partial / Path(release_file).name)
    shutil.rmtree(target, ignore_errors=True)
    partial.rename(target)


def log_path(root: Path, build: GoBuild) -> Path:
    folder = root / "logs"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"build-{build.key}.log"


def install_debian_package(package: str, binary: str, progress: BuildProgress) -> Path:
    """`binary` from PATH, or from Debian's `package`, installed with apt when it is missing."""
    found = shutil.which(binary)
    if found is not None:
        return Path(found)
    if shutil.which("apt-get") is None:
        raise BuildError(f"{binary} is not installed and apt-get is not available to install it")
    progress.say(f"installing Debian's {package} package with apt-get")
    apt = ["apt-get"] if os.geteuid() == 0 else ["sudo", "-n", "apt-get"]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    _run([*apt, "update", "-qq"], env=env)
    _run([*apt, "install", "-y", "-qq", "--no-install-recommends", package], env=env)
    installed = shutil.which(binary)
    if installed is None:
        raise BuildError(f"apt-get installed {package} but no `{binary}` is on PATH")
    return Path(installed)


def install_prometheus(progress: BuildProgress) -> Path:
    return install_debian_package(PROMETHEUS_PACKAGE, "prometheus", progress)


def binaries(root: Path | None = None) -> Binaries:
    root = root or cache_root()
    prometheus = shutil.which("prometheus") or "/usr/bin/prometheus"
    return Binaries.in_cache(root, Path(prometheus))


def build_all(
    root: Path | None = None, *, force: bool = False, progress: BuildProgress | None = None
) -> BuildReport:
    root = root or cache_root()
    progress = progress or BuildProgress()
    started = time.monotonic()
    env = go_environment(root)
    times = BuildTimes(root / "build-times.json")
    built: list[str] = []
    missing = [
        build
        for build in GO_BUILDS
        if force
        or not all((root / "bin" / build.key / name).is_file() for name in build.installed_files())
    ]
    reused = [build.key for build in GO_BUILDS if build not in missing]
    if missing:
        progress.say(
            f"building {len(missing)} of the local cluster's {len(GO_BUILDS)} components into "
            f"{root}/bin (once; later runs reuse them); logs in {root}/logs"
        )
    for number, build in enumerate(missing, 1):
        label = f"[{number}/{len(missing)}] {build.name} {build.version}"
        component_started = time.monotonic()
        with progress.component(label, times.expected(build.name, build.typical_seconds)) as shown:
            build_component(build, root, env, shown)
        times.record(build.name, time.monotonic() - component_started)
        built.append(build.key)
    install_prometheus(progress)
    return BuildReport(tuple(built), tuple(reused), time.monotonic() - started)
