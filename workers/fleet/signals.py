"""The worker's Celery signal handlers, apart from the tasks they serve.

Telemetry per process, the launcher's lifeline, the collector settled after boot, and
quarantine for what Celery itself refuses.

Imported by a worker at boot with the tasks (the app's ``include``); a client never
imports it.
"""

from __future__ import annotations

import logging
from typing import Any

import redis
from celery import Celery
from celery.signals import (
    task_rejected,
    task_unknown,
    worker_init,
    worker_process_init,
    worker_process_shutdown,
    worker_ready,
    worker_shutdown,
)

from workers.connections import broker_client
from workers.fleet import gc_tuning, lifeline
from workers.fleet.queues import Queue
from workers.fleet.transport.quarantine import quarantine_refused
from workers.fleet.worker_deps import deps_of, forget_after_fork, settings_of
from workers.observe import telemetry

log = logging.getLogger(__name__)


@worker_process_init.connect
def _fresh_deps_after_fork(**_: Any) -> None:
    forget_after_fork()


def _setup_telemetry(app: Celery) -> None:
    broker: list[redis.Redis] = []  # the queues are the broker's, wherever the state is

    def depths() -> dict[str, int]:
        """Waiting messages in the queues this worker consumes (all three when unknown)."""
        selected = app.amqp.queues.consume_from
        names = sorted(selected) if selected else [q.value for q in Queue]
        settings = settings_of(app)
        if not broker:
            broker.append(broker_client(settings, max_connections=2))
        return {name: int(broker[0].llen(settings.keys.queue(name))) for name in names}

    telemetry.setup(settings_of(app), queue_depths=depths)


@worker_init.connect
def _telemetry_in_main_process(sender: Any = None, **_: Any) -> None:
    """Threads and solo pools never fork: set up here. Prefork sets up in each child."""
    from celery import current_app
    from celery.concurrency import get_implementation
    from celery.concurrency.prefork import TaskPool as PreforkPool

    app = getattr(sender, "app", None) or current_app
    pool = get_implementation(getattr(sender, "pool_cls", None) or app.conf.worker_pool)
    if not (isinstance(pool, type) and issubclass(pool, PreforkPool)):
        _setup_telemetry(app)


@worker_process_init.connect
def _telemetry_after_fork(**_: Any) -> None:
    from celery import current_app

    _setup_telemetry(current_app)


@worker_init.connect
def _stop_with_launcher(**_: Any) -> None:
    """A worker a launcher started stops when it is gone (``workers/fleet/lifeline.py``)."""
    lifeline.stop_with_launcher()


@worker_ready.connect
def _settle_heap_when_ready(sender: Any = None, **_: Any) -> None:
    """Build the collaborators, then freeze what boot made (``workers/fleet/gc_tuning.py``).

    Only where tasks run in this process (gevent, threads, solo), before the first one:
    a prefork parent runs none, and its children build after the fork.
    """
    from celery.concurrency.prefork import TaskPool as PreforkPool

    app = getattr(sender, "app", None)
    if app is None or isinstance(getattr(sender, "pool", None), PreforkPool):
        return
    deps_of(app)
    frozen = gc_tuning.settle_after_boot()
    log.debug("froze %d objects after boot", frozen)


@worker_process_shutdown.connect
@worker_shutdown.connect
def _flush_telemetry(**_: Any) -> None:
    """A recycled pool child loses its buffered spans unless they are flushed first."""
    telemetry.shutdown()


@task_unknown.connect
def _quarantine_unknown(message: Any = None, name: Any = None, **_: Any) -> None:
    """The transport refuses unknown task names first; this files any that slip through."""
    quarantine_refused(message, f"unknown task name {str(name)[:200]!r}")


@task_rejected.connect
def _quarantine_rejected(message: Any = None, exc: Any = None, **_: Any) -> None:
    """Likewise for messages Celery cannot read (a format or content type it refuses)."""
    quarantine_refused(message, f"{type(exc).__name__}: {exc}" if exc else "unknown format")
