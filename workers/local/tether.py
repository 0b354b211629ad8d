"""Child processes that die with the process that started them, SIGKILL included.

A ``redis-server`` started by ``windags-eval fleet``, the demo or a test fixture used to
outlive a launcher killed with SIGKILL (a CI timeout, an OOM kill), holding its port and
memory with parent 1 until someone killed it by hand. A Celery worker watches its
launcher (``workers/fleet/lifeline.py``); a ``redis-server`` runs no code of ours, so it
is tied to its launcher by the kernel instead: Linux's parent-death signal
(``prctl(PR_SET_PDEATHSIG, SIGKILL)``, set in the child before it executes the program,
and kept across ``exec``).

The kernel sends that signal when the *thread* that forked the child ends, not the
process, and a launcher starts and restarts servers from whatever thread calls it. So
every tethered child is forked by one thread of this module that lives as long as the
process. Elsewhere than Linux children start untethered.
"""

from __future__ import annotations

import ctypes
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, cast

_PR_SET_PDEATHSIG = 1
_Request = tuple[list[str], dict[str, Any], "Future[subprocess.Popen[bytes]]"]


def _parent_death_signal() -> Callable[[], None] | None:
    """What the child runs before ``exec`` to die with this process; None off Linux."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def tie() -> None:  # in the forked child, before exec: two system calls
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:  # the launcher died before the tie was made
            os._exit(1)

    return tie


class _Forker:
    """The one long-lived thread that forks every tethered child."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """No thread yet: the first ``popen`` starts it."""
        self._requests: queue.SimpleQueue[_Request] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def popen(self, args: list[str], kwargs: dict[str, Any]) -> subprocess.Popen[bytes]:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name="tether", daemon=True)
                self._thread.start()
        done: Future[subprocess.Popen[bytes]] = Future()
        self._requests.put((args, kwargs, done))
        return done.result()

    def _serve(self) -> None:
        tie = _parent_death_signal()
        while True:
            args, kwargs, done = self._requests.get()
            try:
                process = subprocess.Popen(args, preexec_fn=tie, **kwargs)
                done.set_result(cast("subprocess.Popen[bytes]", process))
            except BaseException as exc:  # handed to the caller, who raises it
                done.set_exception(exc)


_FORKER = _Forker()
# A forked copy of this process has no forker thread: it starts its own when it needs one.
os.register_at_fork(after_in_child=_FORKER.reset)


def tethered(args: list[str], **kwargs: Any) -> subprocess.Popen[bytes]:
    """``subprocess.Popen(args, **kwargs)``, killed (SIGKILL) when this process ends."""
    return _FORKER.popen(args, kwargs)
