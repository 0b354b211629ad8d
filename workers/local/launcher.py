"""A local fleet: a Redis (found or started), one worker process per queue.

What ``windags-eval fleet`` and ``demo`` run, and what integration tests start: the same
commands as the Procfile, as real processes. A worker that exits on its own is started
again with backoff (``workers/local/supervisor.py``); one the caller kills or stops is not.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from workers.errors import FleetError
from workers.fleet.lifeline import LAUNCHER_PID_ENV
from workers.fleet.queues import Queue
from workers.local.redis_server import PrivateRedis, redis_answers
from workers.local.scratch import disown, scratch_folder
from workers.local.shield import interrupts_deferred
from workers.local.supervisor import BAD_SETTINGS_EXIT, Backoff, Restart, Supervisor
from workers.local.worker_commands import (
    DEFAULT_CONCURRENCY,
    THREADS,
    concurrency_for,
    model_judge_in,
    pool_for,
    worker_command,
)

# Importers of the launcher find the command line here too.
__all__ = ["DEFAULT_CONCURRENCY", "LocalFleet", "worker_command"]


@dataclass
class LocalFleet:
    """Workers for all three queues against one Redis; a context manager."""

    redis_url: str
    #: Per worker kind; a kind left out gets its pool's default (``concurrency_for``).
    concurrency: dict[Queue, int] = field(default_factory=dict)
    extra_env: dict[str, str] = field(default_factory=dict)
    #: Environment for one worker kind only, over ``extra_env`` (e.g. its metrics port).
    worker_env: dict[Queue, dict[str, str]] = field(default_factory=dict)
    #: Celery pool of every worker; None: gevent for the stages that call a model judge,
    #: threads elsewhere (``workers/local/worker_commands.py``).
    pool: str | None = None
    start_private_redis: bool = True
    workers: dict[Queue, subprocess.Popen[bytes]] = field(default_factory=dict)
    private: PrivateRedis | None = None
    tag: str = field(default_factory=lambda: uuid.uuid4().hex[:6])
    #: The workers' logs; a killed run's is removed when the next one starts (``scratch.py``).
    log_dir: Path = field(default_factory=lambda: scratch_folder("fleet"))
    #: Restart workers that exit on their own (with ``backoff``), telling ``on_restart``.
    supervise: bool = True
    backoff: Backoff = field(default_factory=Backoff)
    on_restart: Callable[[Restart], None] | None = None
    supervisor: Supervisor | None = None
    _down_on_purpose: set[Queue] = field(default_factory=set)
    _lock: threading.RLock = field(default_factory=threading.RLock)

    def __enter__(self) -> LocalFleet:
        try:
            self._find_redis()
            for queue in Queue:
                self.start_worker(queue)
        except BaseException:  # a Ctrl-C too: what started is stopped, the folder removed
            with interrupts_deferred():
                self.stop()
            raise
        if self.supervise:
            self.supervisor = Supervisor(
                processes=lambda: dict(self.workers),
                start=self.start_worker,
                intended=lambda queue: queue in self._down_on_purpose,
                backoff=self.backoff,
                on_restart=self.on_restart,
            )
            self.supervisor.run_in_background()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        with interrupts_deferred():  # a Ctrl-C now waits until every process is stopped
            self.stop()

    def _find_redis(self) -> None:
        if redis_answers(self.redis_url):
            return
        if not self.start_private_redis:
            raise FleetError(
                f"no Redis answers at {self.redis_url} (WINDAGS_REDIS_URL); start it, or "
                "unset WINDAGS_REDIS_URL to have a private one started"
            )
        if not shutil.which("redis-server"):
            raise FleetError(
                f"no Redis answers at {self.redis_url}. Start one (apt-get install "
                "redis-server, or docker run -p 6379:6379 redis:7) or set WINDAGS_REDIS_URL"
            )
        self.private = PrivateRedis().start()
        self.redis_url = self.private.url

    @property
    def env(self) -> dict[str, str]:
        """The environment the workers run with; they stop when this process is gone."""
        return {
            **os.environ,
            **self.extra_env,
            "WINDAGS_REDIS_URL": self.redis_url,
            LAUNCHER_PID_ENV: str(os.getpid()),
        }

    def worker_name(self, queue: Queue) -> str:
        """The Celery node name of a queue's worker."""
        return f"{queue.value}-{self.tag}@{socket.gethostname()}"

    def start_worker(self, queue: Queue) -> subprocess.Popen[bytes]:
        """Start (or restart) the worker of ``queue``."""
        pool = self.pool or pool_for(queue, model_judge=model_judge_in(self.env))
        concurrency = self.concurrency.get(queue) or concurrency_for(queue, pool)
        # The router runs celery beat (the calibration refit), as in the Procfile; its
        # schedule lives with the fleet's logs and goes with them.
        beats = queue is Queue.ROUTER and pool == THREADS
        command = worker_command(
            queue,
            concurrency=concurrency,
            name=self.worker_name(queue),
            pool=pool,
            beat_schedule=self.log_dir / "beat-schedule" if beats else None,
        )
        with self._lock, (self.log_dir / f"{queue.value}.log").open("ab") as log:
            self.workers[queue] = subprocess.Popen(
                command,
                env={**self.env, **self.worker_env.get(queue, {})},
                start_new_session=True,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
            self._down_on_purpose.discard(queue)
            return self.workers[queue]

    def restart_worker(self, queue: Queue, timeout_s: float = 60.0) -> None:
        """Start ``queue``'s worker again (after a kill or stop) and wait until it answers."""
        self.start_worker(queue)
        self.wait_ready(timeout_s=timeout_s, queues=(queue,))

    def wait_ready(self, timeout_s: float = 60.0, queues: tuple[Queue, ...] = tuple(Queue)) -> None:
        """Block until each worker answers Celery's own ping."""
        from workers.fleet.app import create_app
        from workers.fleet.outage import CONNECTION_FAULTS
        from workers.settings import Settings

        probe = create_app(Settings.from_environment(self.env, redis_url=self.redis_url))
        wanted = {self.worker_name(q) for q in queues}
        answered: set[str] = set()  # a busy worker may miss one round's 1 s and make the next
        deadline = time.monotonic() + timeout_s
        try:
            while time.monotonic() < deadline:
                for queue, process in list(self.workers.items()):
                    if process.poll() is not None and not self._restarts(queue, process):
                        raise FleetError(
                            f"the {queue.value} worker exited with {process.returncode}"
                        )
                try:
                    replies = probe.control.ping(destination=sorted(wanted - answered), timeout=1.0)
                except CONNECTION_FAULTS:
                    # kombu pools connections per URL across apps: after a Redis restart
                    # the first ping may take one that died with it; the next reconnects.
                    time.sleep(0.2)  # and while Redis is still down, do not spin
                    continue
                answered |= {name for reply in replies for name in reply}
                if wanted <= answered:
                    return
            missing = ", ".join(sorted(wanted - answered))
            raise FleetError(f"workers did not answer ping within {timeout_s:.0f}s: {missing}")
        finally:
            probe.close()

    def _restarts(self, queue: Queue, process: subprocess.Popen[bytes]) -> bool:
        """Whether the supervisor will start this exited worker again."""
        return (
            self.supervisor is not None
            and queue not in self._down_on_purpose
            and process.returncode != BAD_SETTINGS_EXIT
        )

    def kill_worker(self, queue: Queue) -> None:
        """SIGKILL a worker: no warm shutdown, its unacked messages stay unacked.

        The supervisor leaves it down: ``restart_worker`` starts it again.
        """
        with self._lock:
            self._down_on_purpose.add(queue)
            process = self.workers.get(queue)
        if process is not None and process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)

    def stop_worker(self, queue: Queue, timeout_s: float = 40.0) -> int:
        """Warm-stop one worker as a scale-down does (SIGTERM); its exit code.

        Celery then stops consuming, lets running tasks finish and hands reserved
        messages back to the queue.
        """
        with self._lock:
            self._down_on_purpose.add(queue)
            process = self.workers[queue]
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
        return process.wait(timeout=timeout_s)

    def stop(self) -> None:
        """Warm-stop every worker, then the private Redis; remove the logs unless one failed.

        A folder per fleet would pile up in /tmp; a failed worker's logs stay (stderr says where).
        """
        failed = any(
            p.poll() is not None and q not in self._down_on_purpose for q, p in self.workers.items()
        ) or bool(self.supervisor and sum(self.supervisor.restarts.values()))
        if self.supervisor is not None:
            self.supervisor.stop()
        self._down_on_purpose.update(self.workers)
        for process in self.workers.values():
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.workers.values():
            try:
                process.wait(timeout=40)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
        self.workers.clear()
        if self.private is not None:
            self.private.close()
            self.private = None
        if failed:
            disown(self.log_dir)
            print(f"a worker failed; its logs are kept in {self.log_dir}", file=sys.stderr)
        else:
            shutil.rmtree(self.log_dir, ignore_errors=True)
