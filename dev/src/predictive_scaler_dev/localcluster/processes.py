"""Start, watch and stop the control plane's processes by pid.

A pid alone can be reused by an unrelated process after a crash, so each
started process is recorded with its kernel start time and only a process
whose pid *and* start time match is ever signalled.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict


class ComponentFailedError(RuntimeError):
    """A component exited or never became healthy; the message carries its log's tail."""


class StartedProcess(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    pid: int
    start_ticks: int
    command: tuple[str, ...]
    log: Path


def _start_ticks(pid: int) -> int | None:
    """Field 22 of /proc/<pid>/stat: when the process started, in clock ticks since boot."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may itself hold spaces.
    fields = stat.rsplit(")", 1)[1].split()
    if fields[0] == "Z":
        return None
    return int(fields[19])


def is_alive(process: StartedProcess) -> bool:
    return _start_ticks(process.pid) == process.start_ticks


def log_tail(path: Path, lines: int = 25) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return f"(no log at {path})"
    return "\n".join(text.splitlines()[-lines:])


def start(
    name: str,
    command: Sequence[str],
    log: Path,
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> StartedProcess:
    """Start `command` in its own session, so it outlives `up` and a Ctrl-C in the shell."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as output:
        child = subprocess.Popen(
            list(command),
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            start_new_session=True,
        )
    ticks = _start_ticks(child.pid)
    if ticks is None:
        child.wait()
        raise ComponentFailedError(f"{name} exited at once:\n{log_tail(log)}")
    # Popen's handle is dropped on purpose: `down` may run in another process,
    # which finds this one by pid. A zombie left by an early exit is reaped in wait_healthy.
    _CHILDREN[child.pid] = child
    return StartedProcess(
        name=name, pid=child.pid, start_ticks=ticks, command=tuple(command), log=log
    )


_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}


def _reap(pid: int) -> None:
    child = _CHILDREN.get(pid)
    if child is not None and child.poll() is not None:
        _CHILDREN.pop(pid, None)


def wait_healthy(
    process: StartedProcess,
    healthy: Callable[[], bool],
    *,
    timeout: float,
    what: str = "healthy",
) -> None:
    """Poll `healthy` until it answers True; fail fast, with the log, if the process dies."""
    deadline = time.monotonic() + timeout
    delay = 0.05
    while True:
        _reap(process.pid)
        if not is_alive(process):
            raise ComponentFailedError(
                f"{process.name} exited before it was {what}:\n{log_tail(process.log)}"
            )
        try:
            if healthy():
                return
        except Exception:  # noqa: BLE001 - any failure of a probe means "not yet"
            pass
        if time.monotonic() > deadline:
            raise ComponentFailedError(
                f"{process.name} was not {what} within {timeout:.0f} s:\n{log_tail(process.log)}"
            )
        time.sleep(delay)
        delay = min(delay * 1.5, 0.5)


@dataclass(frozen=True)
class Stopped:
    name: str
    pid: int
    how: str


def stop(process: StartedProcess, *, grace: float = 10.0) -> Stopped:
    """SIGTERM the process's group, SIGKILL whatever is left after `grace` seconds."""
    if not is_alive(process):
        _reap(process.pid)
        return Stopped(process.name, process.pid, "was not running")
    os.killpg(process.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        _reap(process.pid)
        if not is_alive(process):
            return Stopped(process.name, process.pid, "terminated")
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    while is_alive(process):
        _reap(process.pid)
        time.sleep(0.05)
    return Stopped(process.name, process.pid, "killed")
