"""A worker started by a launcher stops when the launcher is gone.

``windags-eval fleet``, the demo, the benchmarks and the tests start workers in sessions
of their own (so that a Ctrl-C reaches the launcher first, which stops them in order). A
launcher killed with SIGKILL (a CI timeout, an OOM kill, ``kill -9``) used to leave them
running, consuming the fleet's queues with stale code and settings until someone found
them. The launcher now names itself in ``WINDAGS_LAUNCHER_PID``; a worker that has it
watches the launcher and, when it is gone, sends itself SIGTERM: Celery's warm shutdown,
as a scale-down does. It stops consuming, hands its reserved messages back to their
queues, lets its running reviews finish (late acks: nothing is lost, nothing acked
unrun) and exits.

Why a watch and not the kernel's parent-death signal (``prctl(PR_SET_PDEATHSIG)``): that
fires when the *thread* that started the child exits, and the launcher restarts workers
from its supervisor thread and from callers' threads, which end long before the
launcher. A direct child watches its parent pid change (the kernel reparents it the
moment the launcher dies, zombie or not); any other checks the launcher's pid.
Workers not started by a launcher (Kubernetes, compose, the Procfile) watch nothing.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Callable, Mapping

log = logging.getLogger("windags.fleet")

#: The variable a launcher sets to its own pid for the workers it starts.
LAUNCHER_PID_ENV = "WINDAGS_LAUNCHER_PID"
#: How often the watch looks (a syscall: costs nothing).
CHECK_EVERY_S = 0.5


def launcher_pid(env: Mapping[str, str]) -> int | None:
    """The launcher's pid from ``env``; None when there is none (or it is no pid)."""
    raw = env.get(LAUNCHER_PID_ENV, "").strip()
    return int(raw) if raw.isdigit() and int(raw) > 1 else None


def launcher_alive(pid: int, parent_at_start: int) -> Callable[[], bool]:
    """A check that is true while launcher ``pid`` runs.

    For a direct child (``pid`` was the parent at start) the parent pid changing is the
    answer; for another process, whether ``pid`` still exists.
    """
    if pid == parent_at_start:
        return lambda: os.getppid() == pid

    def exists() -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # someone else's process took the pid: ours is gone
            return False
        return True

    return exists


def stop_with_launcher(
    env: Mapping[str, str] = os.environ,
    *,
    on_gone: Callable[[], None] | None = None,
    every_s: float = CHECK_EVERY_S,
) -> threading.Thread | None:
    """Watch the launcher named in ``env`` on a daemon thread; None when there is none.

    ``on_gone`` (default: SIGTERM to this process, a warm shutdown) runs once, when the
    launcher is gone, or at once if it is gone already.
    """
    pid = launcher_pid(env)
    if pid is None:
        return None
    alive = launcher_alive(pid, os.getppid())
    act = on_gone or _warm_shutdown

    def watch() -> None:
        stop = threading.Event()
        while alive():
            stop.wait(every_s)
        log.warning("the launcher (pid %d) is gone: warm shutdown", pid)
        act()

    thread = threading.Thread(target=watch, name="launcher-lifeline", daemon=True)
    thread.start()
    return thread


def _warm_shutdown() -> None:
    os.kill(os.getpid(), signal.SIGTERM)
