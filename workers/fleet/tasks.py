"""Thin Celery adapters: decode arguments, call the handler, enqueue the next hop."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from celery import Task
from celery.signals import (
    worker_init,
    worker_process_init,
    worker_process_shutdown,
    worker_shutdown,
)

from workers import spans, telemetry
from workers.app import app
from workers.deps import Deps, build_deps
from workers.handlers import (
    Hop,
    Outcome,
    RetryLater,
    handle_malformed,
    handle_router,
    handle_stage1,
    handle_stage2,
)
from workers.queues import Queue, TaskName
from workers.settings import Settings

_SETTINGS: Settings = app.conf.windags_settings


@cache
def deps() -> Deps:
    """This process's collaborators, built on first use after the fork."""
    return build_deps(_SETTINGS)


@worker_process_init.connect
def _fresh_deps_after_fork(**_: Any) -> None:
    deps.cache_clear()


def _queue_depths() -> dict[str, int]:
    """Waiting messages in the queues this worker consumes (all three when unknown)."""
    selected = app.amqp.queues.consume_from
    names = sorted(selected) if selected else [q.value for q in Queue]
    client = deps().redis
    return {name: int(client.llen(name)) for name in names}


def _setup_telemetry() -> None:
    telemetry.setup(_SETTINGS, queue_depths=_queue_depths)


@worker_init.connect
def _telemetry_in_main_process(sender: Any = None, **_: Any) -> None:
    """Threads and solo pools never fork: set up here. Prefork sets up in each child."""
    from celery.concurrency import get_implementation
    from celery.concurrency.prefork import TaskPool as PreforkPool

    pool = get_implementation(getattr(sender, "pool_cls", None) or app.conf.worker_pool)
    if not (isinstance(pool, type) and issubclass(pool, PreforkPool)):
        _setup_telemetry()


@worker_process_init.connect
def _telemetry_after_fork(**_: Any) -> None:
    _setup_telemetry()


@worker_process_shutdown.connect
@worker_shutdown.connect
def _flush_telemetry(**_: Any) -> None:
    """A recycled pool child loses its buffered spans unless they are flushed first."""
    telemetry.shutdown()


def _traced(stage: Queue, handler: Callable[[str | None], Outcome]) -> Outcome:
    """Run a handler inside its stage span, handing it that span's ``traceparent``."""
    with spans.stage_span(stage.value) as opened:
        outcome = handler(telemetry.traceparent())
        if isinstance(outcome, Hop):
            spans.set_outcome(opened, f"hop:{outcome.task.value}")
        else:
            spans.set_outcome(opened, "retry" if isinstance(outcome, RetryLater) else "done")
    return outcome


def _malformed(stage: Queue, args: tuple[object, ...], kwargs: dict[str, Any]) -> Outcome:
    """A call the handler cannot take ends as an error entry, never as a silent drop."""
    return _traced(stage, lambda _: handle_malformed(stage, args, kwargs, deps()))


def _follow(task: Task, outcome: Outcome) -> None:
    if isinstance(outcome, Hop):
        app.send_task(outcome.task.value, args=list(outcome.args))
    elif isinstance(outcome, RetryLater):
        raise task.retry(countdown=outcome.delay_s, max_retries=None, exc=None)


@app.task(
    name=TaskName.STAGE1.value,
    bind=True,
    soft_time_limit=_SETTINGS.stage1_soft_limit_s,
    time_limit=_SETTINGS.stage1_hard_limit_s,
)
def stage1(self: Task, *args: Any, **kwargs: Any) -> None:
    """Floor + Wall on every node. Takes any arguments: Celery drops a call that misfits."""
    if len(args) != 1 or kwargs:
        _follow(self, _malformed(Queue.STAGE1, args, kwargs))
        return
    raw = args[0]
    _follow(self, _traced(Queue.STAGE1, lambda tp: handle_stage1(raw, deps(), traceparent=tp)))


@app.task(
    name=TaskName.ROUTER.value,
    bind=True,
    soft_time_limit=_SETTINGS.stage1_soft_limit_s,
    time_limit=_SETTINGS.stage1_hard_limit_s,
)
def router(self: Task, *args: Any, **kwargs: Any) -> None:
    """The escalation decision."""
    if len(args) != 2 or kwargs:
        _follow(self, _malformed(Queue.ROUTER, args, kwargs))
        return
    request_json, report_json = args
    _follow(
        self,
        _traced(
            Queue.ROUTER,
            lambda tp: handle_router(request_json, report_json, deps(), traceparent=tp),
        ),
    )


@app.task(
    name=TaskName.STAGE2.value,
    bind=True,
    soft_time_limit=_SETTINGS.stage2_soft_limit_s,
    time_limit=_SETTINGS.stage2_hard_limit_s,
)
def stage2(self: Task, *args: Any, **kwargs: Any) -> None:
    """The Ceiling, only for escalated nodes."""
    if len(args) != 2 or kwargs:
        _follow(self, _malformed(Queue.STAGE2, args, kwargs))
        return
    request_json, routed_json = args
    _follow(
        self,
        _traced(
            Queue.STAGE2,
            lambda tp: handle_stage2(request_json, routed_json, deps(), traceparent=tp),
        ),
    )
