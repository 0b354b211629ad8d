"""The Celery worker command line of each queue, and the pool it runs.

Stage 1 and Stage 2 wait on the judge. With the built-in judge that wait is CPU in the
same process, and the threads pool measures best; with a model judge it is a network
call of hundreds of milliseconds to seconds, and a threads process stalls far below its
concurrency / latency bound (``python -m bench.stage1_io``), so those two queues run on
gevent with hundreds of calls in flight. The router never calls a model: threads. The refs
queue waits on the web whatever the judge: gevent always.
gevent patches the standard library when ``celery worker`` sees ``--pool gevent`` on its
command line, before anything else is imported: the pool can only be chosen there.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

from workers.errors import ConfigurationError
from workers.fleet.queues import Queue
from workers.judges.factory import calls_a_model
from workers.settings import Settings

THREADS = "threads"
IO_POOL = "gevent"
#: Threads per worker kind with the built-in judge (and the router always).
DEFAULT_CONCURRENCY = {Queue.STAGE1: 4, Queue.ROUTER: 2, Queue.STAGE2: 4, Queue.REFS: 4}
#: Greenlets per worker kind on ``IO_POOL``: model calls (or fetches) in flight per process.
IO_CONCURRENCY = {Queue.STAGE1: 100, Queue.STAGE2: 50, Queue.REFS: 100}
#: Worker kinds that wait on the network whatever the judge.
ALWAYS_IO = frozenset({Queue.REFS})


def model_judge_in(env: Mapping[str, str]) -> bool:
    """Whether workers started with ``env`` call a model judge.

    False when the settings do not load: the worker itself then stops at boot, naming
    the bad variable.
    """
    try:
        settings = Settings.from_environment(env, redis_url="redis://127.0.0.1:6379/0")
    except (ValueError, ConfigurationError):
        return False
    return calls_a_model(settings)


def pool_for(queue: Queue, *, model_judge: bool) -> str:
    """The pool of ``queue``'s worker: gevent where it waits on a model or the web."""
    if queue in ALWAYS_IO:
        return IO_POOL
    return IO_POOL if model_judge and queue in IO_CONCURRENCY else THREADS


def concurrency_for(queue: Queue, pool: str) -> int:
    """The default concurrency of ``queue``'s worker on ``pool``."""
    if pool == IO_POOL:
        return IO_CONCURRENCY.get(queue, DEFAULT_CONCURRENCY[queue])
    return DEFAULT_CONCURRENCY[queue]


def worker_command(
    queue: Queue,
    *,
    concurrency: int,
    name: str | None = None,
    loglevel: str = "WARNING",
    pool: str = THREADS,
    beat_schedule: Path | None = None,
) -> list[str]:
    """The Celery worker command line for one queue (the Procfile's, with a unique name).

    ``beat_schedule``: run celery beat inside (the router's, as in the Procfile), keeping
    its schedule in that file.
    """
    command = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "workers.fleet.worker",
        "worker",
        "-Q",
        queue.value,
        "-n",
        name or f"{queue.value}@%h",
        "--pool",
        pool,
        "--concurrency",
        str(concurrency),
        "--without-gossip",
        "--without-mingle",
        "--loglevel",
        loglevel,
    ]
    # Stage 2 calls are long: reserve one at a time. Stage 1 and router tasks take
    # milliseconds, so a few reserved ahead keep the pool busy and stay far inside the
    # visibility timeout.
    prefetch = 1 if queue is Queue.STAGE2 else 4
    command += ["--prefetch-multiplier", str(prefetch)]
    if beat_schedule is not None:
        if pool != THREADS:
            raise ConfigurationError(f"celery beat runs on the threads pool, not {pool}")
        command += ["-B", "--schedule", str(beat_schedule)]
    return command
