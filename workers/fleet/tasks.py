"""Thin Celery adapters: check the arguments, call the handler, enqueue the next hop.

Imported by a worker at boot (the app's ``include``); a client never imports it. Time
limits come from the app's ``task_annotations`` (settings), and each process builds its
collaborators from the app's settings on first use, after any fork.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from celery import Task, shared_task

from workers.fleet.deps import Deps
from workers.fleet.guard import Delivery
from workers.fleet.handlers import (
    handle_malformed,
    handle_refs,
    handle_router,
    handle_stage1,
    handle_stage2,
)
from workers.fleet.next_hop import Hop, Outcome, RetryLater
from workers.fleet.queues import Queue, TaskName
from workers.fleet.replay import REPLAY_HEADER, REPLAYS_HEADER, ReplayOf, replay_count, replay_of
from workers.fleet.transport import settle
from workers.fleet.worker_deps import deps_of
from workers.learning.periodic import run_refit
from workers.observe import spans, tracecontext

log = logging.getLogger(__name__)


def _run(task: Task, stage: Queue, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Call the stage's handler inside its span, then follow the outcome."""
    deps = deps_of(task.app)
    # The last write (the hop, or a published result) acks the delivery with it (``settle``).
    with settle.running((task.request.properties or {}).get("delivery_tag")):
        with spans.stage_span(stage.value) as opened:
            traceparent = tracecontext.traceparent()
            delivery = delivery_of(task, max_replays=deps.settings.max_task_replays)
            outcome = _handle(stage, args, kwargs, deps, traceparent, delivery)
            if isinstance(outcome, Hop):
                spans.set_outcome(opened, f"hop:{outcome.task.value}")
            else:
                spans.set_outcome(opened, "retry" if isinstance(outcome, RetryLater) else "done")
        if isinstance(outcome, Hop):
            with settle.arm():
                task.app.send_task(
                    outcome.task.value,
                    args=list(outcome.args),
                    # What monitors show of the call: the review's identity. Celery's default
                    # is a saferepr of every argument (the whole request and report, cut at
                    # 1 KiB), about 0.1 ms of a gevent Stage 1 worker's CPU per hop.
                    argsrepr=f"({outcome.args[0]!r}, ...)",
                    kwargsrepr="{}",
                )
        elif isinstance(outcome, RetryLater):
            raise task.retry(countdown=outcome.delay_s, max_retries=None, exc=None)


def delivery_of(task: Task, *, max_replays: int) -> Delivery:
    """Whether the running task is its message's first delivery.

    kombu marks a message it restores (a dead worker's, a requeue, an overdue one)
    ``redelivered``; a Celery retry is a new message that counts its ``retries``. A
    message a live worker handed back when its Redis connection died is a replay of the
    delivery it interrupted (``workers/fleet/replay.py``), until it was handed back more
    than ``max_replays`` times.
    """
    request = task.request
    info = request.delivery_info or {}
    headers = request.headers or {}
    retries = request.retries or 0
    own = {  # Celery's copy of headers
        REPLAY_HEADER: getattr(request, REPLAY_HEADER, None),
        REPLAYS_HEADER: getattr(request, REPLAYS_HEADER, None),
    }
    replay = replay_of(headers, retries) or replay_of(own, retries)
    replays = max(replay_count(headers), replay_count(own))
    if replay is not None and replays > max_replays:
        log.warning(
            "task %s was handed back %d times, more than %d: its tries count from now on",
            request.id,
            replays,
            max_replays,
        )
        return Delivery.REPLAY_COUNTED
    if replay is ReplayOf.FIRST and not retries:
        return Delivery.FIRST_REPLAY
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
    Queue.REFS: handle_refs,
}
_ARITY = {Queue.STAGE1: 1, Queue.ROUTER: 3, Queue.STAGE2: 3, Queue.REFS: 3}


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


@shared_task(name=TaskName.REFS.value, bind=True)
def refs(self: Task, *args: Any, **kwargs: Any) -> None:
    """Look-ups of the URLs an output cites, between Stage 1 and the router."""
    _run(self, Queue.REFS, args, kwargs)


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
