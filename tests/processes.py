"""Every process a test run starts is gone when the run ends: the suite checks it.

The run marks its environment (``MARK``), which every process it starts inherits (a
worker of a fleet a test started, the demo's fleet, a server), and becomes a child
subreaper, so that a process whose parent died is re-parented to the run rather than to
init. At the end, ``leftovers`` finds the processes still alive that carry the mark or
descend from the run; the session fails naming them, and they are stopped (SIGTERM, a
bounded wait, SIGKILL) so that they do not outlive it either.
"""

from __future__ import annotations

import ctypes
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from tests.redis_leases import RUN_ID

#: The environment variable naming the run that started a process (no ``WINDAGS`` in its
#: name: tests drop those variables from the environments they give the CLI).
MARK = "EVALUATOR_TEST_RUN"
_PR_SET_CHILD_SUBREAPER = 36


@dataclass(frozen=True)
class Leftover:
    """A process alive after the run, and what it runs."""

    pid: int
    command: str


def mark_this_run() -> None:
    """Mark what this process starts from now on, and adopt its orphans (Linux)."""
    os.environ[MARK] = RUN_ID
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: the mark alone finds them


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, parent pid) of a live process, or None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[1].split()
    return fields[0], int(fields[1])


def _marked(pid: int, variable: str = MARK, value: str = RUN_ID) -> bool:
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False
    return f"{variable}={value}".encode() in environ.split(b"\0")


def carrying(variable: str, value: str) -> list[Leftover]:
    """The live processes (zombies aside) whose environment sets ``variable`` to ``value``.

    A program that rewrites its title over its environment (``redis-server`` does) loses
    the variable: find it by pid.
    """
    pids = [int(entry.name) for entry in Path("/proc").iterdir() if entry.name.isdigit()]
    return [
        Leftover(pid, _command(pid)) for pid in pids if alive(pid) and _marked(pid, variable, value)
    ]


def leftovers() -> list[Leftover]:
    """The live processes (zombies aside) this run started, other than itself."""
    me = os.getpid()
    stats = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != me:
            found = _stat(int(entry.name))
            if found is not None and found[0] not in ("Z", "X"):
                stats[int(entry.name)] = found
    ours = []
    for pid, (_, parent) in stats.items():
        chain, seen = parent, set()
        while chain in stats and chain not in seen:
            seen.add(chain)
            chain = stats[chain][1]
        if chain == me or parent == me or _marked(pid):
            ours.append(Leftover(pid, _command(pid)))
    return ours


def _command(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return "?"
    return raw.replace(b"\0", b" ").decode(errors="replace").strip()[:200]


def settled_leftovers(grace_s: float = 20.0) -> list[Leftover]:
    """``leftovers``, after giving processes being stopped ``grace_s`` to finish exiting."""
    deadline = time.monotonic() + grace_s
    found = leftovers()
    while found and time.monotonic() < deadline:
        time.sleep(0.5)
        found = leftovers()
    return found


def stop(processes: list[Leftover], grace_s: float = 10.0) -> None:
    """SIGTERM each, wait up to ``grace_s`` for all, SIGKILL the rest."""
    for signum in (signal.SIGTERM, signal.SIGKILL):
        for process in processes:
            try:
                os.kill(process.pid, signum)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline and any(alive(p.pid) for p in processes):
            time.sleep(0.1)


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not)."""
    found = _stat(pid)
    return found is not None and found[0] not in ("Z", "X")
