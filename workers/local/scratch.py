"""Temporary folders of local runs, and the sweep that removes those of runs that died.

A fleet keeps its workers' logs in a ``windags-fleet-*`` folder, a private Redis its data
in a ``windags-redis-*`` one, and each removes its own when it stops. A run killed with
SIGKILL cannot, and used to leave one of each behind per run. Each folder now names its
owner (the pid and start time of the process that made it, in ``OWNER_FILE``), and making
one first removes every ``windags-*`` folder whose owner is gone. A folder with no owner
file is never swept: one from an older version, or logs kept on purpose (``disown``).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

#: Every folder made here is named ``<PREFIX><kind>-<random>`` in the temporary directory.
PREFIX = "windags-"
OWNER_FILE = ".windags-owner"


def _started(pid: int) -> str | None:
    """When ``pid`` started (clock ticks since boot) on Linux, '' elsewhere; None if gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return None if Path("/proc/self/stat").exists() else ""
    except OSError:
        return ""
    return text.rsplit(")", 1)[1].split()[19]


def _alive(pid: int, started: str) -> bool:
    """Whether the process that wrote an owner file (``pid``, ``started``) still runs."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # someone else's process has this pid: ours may still be it, keep the folder
    now = _started(pid)
    unknown = not now or started == "-"
    return now is not None and (unknown or now == started)


def _orphaned(folder: Path) -> bool:
    """Whether ``folder`` names an owner, and that owner is gone."""
    try:
        pid_text, started = (folder / OWNER_FILE).read_text().split()
        pid = int(pid_text)
    except (OSError, ValueError):
        return False
    return not _alive(pid, started)


def _ours(folder: Path) -> bool:
    """A real folder (not a link) of this user's: the only kind a sweep may remove."""
    try:
        return folder.is_dir() and not folder.is_symlink() and folder.stat().st_uid == os.getuid()
    except OSError:
        return False


def sweep(directory: Path | None = None) -> list[Path]:
    """Remove this user's ``windags-*`` folders of dead runs in ``directory`` (temp dir)."""
    root = Path(directory or tempfile.gettempdir())
    removed = []
    for folder in root.glob(f"{PREFIX}*"):
        if _ours(folder) and _orphaned(folder):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def scratch_folder(kind: str) -> Path:
    """A new ``windags-<kind>-*`` folder owned by this process, after a sweep of dead ones."""
    sweep()
    folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{kind}-"))
    pid = os.getpid()
    (folder / OWNER_FILE).write_text(f"{pid} {_started(pid) or '-'}\n")
    return folder


def disown(folder: Path) -> None:
    """Keep ``folder`` past this process: no later sweep removes it."""
    (folder / OWNER_FILE).unlink(missing_ok=True)
