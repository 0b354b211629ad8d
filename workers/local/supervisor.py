"""Restart a local fleet's workers that exit on their own, with backoff, and say so.

A Celery worker can exit under faults it does not handle (an unrecoverable error in its
consumer, an OOM kill). Kubernetes restarts such a container (``restartPolicy: Always``,
the only policy a Deployment takes) and compose does (``restart: unless-stopped``); the
local fleet has this. Restarting is safe: a worker's unacked messages stay in Redis and
come back after the visibility timeout, and publication is once per review key.

A worker the caller stops or kills on purpose (``LocalFleet.kill_worker``, ``stop_worker``)
is not restarted: the caller decides.
"""

from __future__ import annotations

import logging
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from workers.fleet.queues import Queue

log = logging.getLogger("windags.fleet")

#: A worker that exits with this code will not start (bad settings): restarting cannot help.
BAD_SETTINGS_EXIT = 2


@dataclass(frozen=True, slots=True)
class Backoff:
    """Delay before the n-th consecutive restart: ``first_s * 2**(n-1)``, capped."""

    first_s: float = 1.0
    max_s: float = 30.0
    reset_after_s: float = 60.0
    """A worker that ran this long before exiting starts the count again."""

    def delay(self, consecutive: int) -> float:
        """Seconds to wait before restart number ``consecutive`` (1-based) of a streak."""
        return min(self.max_s, self.first_s * 2.0 ** max(0, consecutive - 1))


@dataclass(frozen=True, slots=True)
class Restart:
    """One worker that exited on its own, and when it is started again."""

    queue: Queue
    exit_code: int
    delay_s: float
    number: int
    """How many times this queue's worker has been restarted, this one included."""

    def describe(self) -> str:
        """One line for a person."""
        return (
            f"the {self.queue.value} worker exited with {self.exit_code}; "
            f"restart {self.number} in {self.delay_s:.1f} s"
        )


@dataclass
class Supervisor:
    """Watches worker processes; restarts the ones that exit unbidden.

    Args:
        processes: The current process of each queue (read on every check).
        start: Starts a queue's worker again (``LocalFleet.start_worker``).
        intended: Whether a queue's worker is down on purpose (not restarted).
    """

    processes: Callable[[], dict[Queue, subprocess.Popen[bytes]]]
    start: Callable[[Queue], object]
    intended: Callable[[Queue], bool]
    backoff: Backoff = field(default_factory=Backoff)
    on_restart: Callable[[Restart], None] | None = None
    every_s: float = 0.5
    restarts: Counter[Queue] = field(default_factory=Counter)
    """Restarts per queue since the fleet started."""
    exits: list[tuple[Queue, int]] = field(default_factory=list)
    """Every unbidden exit seen, with its exit code, in order."""
    _streak: Counter[Queue] = field(default_factory=Counter)
    _due: dict[Queue, float] = field(default_factory=dict)
    _started_at: dict[Queue, float] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def check(self) -> None:
        """One pass: note new exits, restart those whose delay has passed."""
        now = time.monotonic()
        for queue, process in self.processes().items():
            code = process.poll()
            if code is None:
                self._started_at.setdefault(queue, now)
                continue
            if self.intended(queue) or code == BAD_SETTINGS_EXIT:
                continue
            if queue not in self._due:
                self._note_exit(queue, code, now)
            elif now >= self._due[queue]:
                del self._due[queue]
                self._started_at[queue] = now
                self.start(queue)

    def _note_exit(self, queue: Queue, code: int, now: float) -> None:
        ran_s = now - self._started_at.pop(queue, now)
        if ran_s >= self.backoff.reset_after_s:
            self._streak[queue] = 0
        self._streak[queue] += 1
        self.restarts[queue] += 1
        self.exits.append((queue, code))
        delay_s = self.backoff.delay(self._streak[queue])
        restart = Restart(queue, code, delay_s, self.restarts[queue])
        self._due[queue] = now + restart.delay_s
        log.warning("%s", restart.describe())
        if self.on_restart is not None:
            self.on_restart(restart)

    def run_in_background(self) -> None:
        """Check every ``every_s`` on a daemon thread until ``stop``."""
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="fleet-supervisor", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop checking (before the fleet stops its workers)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None

    def _loop(self) -> None:
        while not self._stop.wait(self.every_s):
            try:
                self.check()
            except Exception:  # the supervisor must outlive any one failed restart
                log.exception("fleet supervisor check failed")
