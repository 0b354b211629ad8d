"""Thin Celery adapters: check the arguments, call the handler, enqueue the next hop.

Imported by a worker at boot (the app's ``include``); a client never imports it. Time
limits come from the app's ``task_annotations`` (settings), and each process builds its
collaborators from the app's settings on first use, after any fork.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import redis
from celery import Celery, Task, shared_task
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
from workers.fleet import heap, lifeline
from workers.fleet.deps import Deps, build_deps
from workers.fleet.guard import Delivery
from workers.fleet.handlers import handle_malformed, handle_router, handle_stage1, handle_stage2
from workers.fleet.outcome import Hop, Outcome, RetryLater
from workers.fleet.quarantine import quarantine_refused
from workers.fleet.queues import Queue, TaskName
from workers.fleet.replay import REPLAY_HEADER, ReplayOf, replay_of
from workers.learning.periodic import run_refit
from workers.observe import spans, telemetry, tracecontext
from workers.settings import Settings

log = logging.getLogger(__name__)
_deps: dict[int, Deps] = {}
#: One builder at a time: a hundred greenlets that each found no collaborators would each
#: build them, importing the SDK's HTTP stack concurrently (a half-imported httpcore2 raised
#: AttributeError in the others). Normally ``worker_ready`` builds them before any task.
_building = threading.Lock()


def deps_of(app: Celery) -> Deps:
    """This process's collaborators for ``app``, built on first use after the fork."""
    found = _deps.get(id(app))
    if found is None:
        with _building:
            found = _deps.get(id(app))
            if found is None:
                found = _deps[id(app)] = build_deps(settings_of(app))
    return found


def settings_of(app: Celery) -> Settings:
    """The settings ``create_app`` attached to ``app``."""
    settings: Settings = app.conf.windags_settings
    return settings


@worker_process_init.connect
def _fresh_deps_after_fork(**_: Any) -> None:
    _deps.clear()


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
    """Build the collaborators, then freeze what boot made (``workers/fleet/heap.py``).

    Only where tasks run in this process (gevent, threads, solo), before the first one:
    a prefork parent runs none, and its children build after the fork.
    """
    from celery.concurrency.prefork import TaskPool as PreforkPool

    app = getattr(sender, "app", None)
    if app is None or isinstance(getattr(sender, "pool", None), PreforkPool):
        return
    deps_of(app)
    frozen = heap.settle_after_boot()
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


def _run(task: Task, stage: Queue, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Call the stage's handler inside its span, then follow the outcome."""
    deps = deps_of(task.app)
    with spans.stage_span(stage.value) as opened:
        outcome = _handle(stage, args, kwargs, deps, tracecontext.traceparent(), delivery_of(task))
        if isinstance(outcome, Hop):
            spans.set_outcome(opened, f"hop:{outcome.task.value}")
        else:
            spans.set_outcome(opened, "retry" if isinstance(outcome, RetryLater) else "done")
    if isinstance(outcome, Hop):
        task.app.send_task(
            outcome.task.value,
            args=list(outcome.args),
            # What monitors show of the call: the review's identity. Celery's default is a
            # saferepr of every argument (the whole request and report, cut at 1 KiB),
            # about 0.1 ms of a gevent Stage 1 worker's CPU per hop.
            argsrepr=f"({outcome.args[0]!r}, ...)",
            kwargsrepr="{}",
        )
    elif isinstance(outcome, RetryLater):
        raise task.retry(countdown=outcome.delay_s, max_retries=None, exc=None)


def delivery_of(task: Task) -> Delivery:
    """Whether the running task is its message's first delivery.

    kombu marks a message it restores (a dead worker's, a requeue, an overdue one)
    ``redelivered``; a Celery retry is a new message that counts its ``retries``. A
    message a live worker handed back when its Redis connection died is a replay of the
    delivery it interrupted (``workers/fleet/replay.py``).
    """
    request = task.request
    info = request.delivery_info or {}
    headers = request.headers or {}
    retries = request.retries or 0
    own = {REPLAY_HEADER: getattr(request, REPLAY_HEADER, None)}  # Celery's copy of headers
    replay = replay_of(headers, retries) or replay_of(own, retries)
    if replay is ReplayOf.FIRST and not retries:
        return Delivery.FIRST
    if replay is not None:
        return Delivery.REPLAY
    if request.retries or info.get("redelivered") or headers.get("redelivered"):
        return Delivery.AGAIN
    return Delivery.FIRST


def _handle(
    stage: Queue,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    deps: Deps,
    traceparent: str | None,
    delivery: Delivery = Delivery.UNKNOWN,
) -> Outcome:
    """The stage's handler, or the malformed-call answer when the arguments misfit."""
    if len(args) != _ARITY[stage] or kwargs:
        return handle_malformed(stage, args, kwargs, deps)
    return _HANDLERS[stage](*args, deps, traceparent=traceparent, delivery=delivery)


_HANDLERS: dict[Queue, Callable[..., Outcome]] = {
    Queue.STAGE1: handle_stage1,
    Queue.ROUTER: handle_router,
    Queue.STAGE2: handle_stage2,
}
_ARITY = {Queue.STAGE1: 1, Queue.ROUTER: 3, Queue.STAGE2: 3}


@shared_task(name=TaskName.STAGE1.value, bind=True)
def stage1(self: Task, *args: Any, **kwargs: Any) -> None:
    """Floor + Wall on every node. Takes any arguments: Celery drops a call that misfits."""
    _run(self, Queue.STAGE1, args, kwargs)


@shared_task(name=TaskName.ROUTER.value, bind=True)
def router(self: Task, *args: Any, **kwargs: Any) -> None:
    """The escalation decision."""
    _run(self, Queue.ROUTER, args, kwargs)


@shared_task(name=TaskName.STAGE2.value, bind=True)
def stage2(self: Task, *args: Any, **kwargs: Any) -> None:
    """The Ceiling, only for escalated nodes."""
    _run(self, Queue.STAGE2, args, kwargs)


@shared_task(name=TaskName.REFIT.value, bind=True)
def refit(self: Task, *args: Any, **kwargs: Any) -> None:
    """The periodic calibration refit celery beat sends (``workers.learning.periodic``)."""
    if args or kwargs:
        log.warning(
            "refit takes no arguments; ignored %d positional, %s", len(args), sorted(kwargs)
        )
    deps = deps_of(self.app)
    with spans.span("windags.calibration.refit"):
        run_refit(deps.redis, deps.settings)
