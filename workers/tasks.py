"""Thin Celery adapters: decode arguments, call the handler, enqueue the next hop."""

from __future__ import annotations

from functools import cache
from typing import Any

from celery import Task
from celery.signals import worker_process_init

from workers.app import app
from workers.deps import Deps, build_deps
from workers.handlers import Hop, Outcome, RetryLater, handle_router, handle_stage1, handle_stage2
from workers.queues import TaskName
from workers.settings import Settings

_SETTINGS: Settings = app.conf.windags_settings


@cache
def deps() -> Deps:
    """This process's collaborators, built on first use after the fork."""
    return build_deps(_SETTINGS)


@worker_process_init.connect
def _fresh_deps_after_fork(**_: Any) -> None:
    deps.cache_clear()


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
def stage1(self: Task, raw: str) -> None:
    """Floor + Wall on every node."""
    _follow(self, handle_stage1(raw, deps()))


@app.task(
    name=TaskName.ROUTER.value,
    bind=True,
    soft_time_limit=_SETTINGS.stage1_soft_limit_s,
    time_limit=_SETTINGS.stage1_hard_limit_s,
)
def router(self: Task, request_json: str, report_json: str) -> None:
    """The escalation decision."""
    _follow(self, handle_router(request_json, report_json, deps()))


@app.task(
    name=TaskName.STAGE2.value,
    bind=True,
    soft_time_limit=_SETTINGS.stage2_soft_limit_s,
    time_limit=_SETTINGS.stage2_hard_limit_s,
)
def stage2(self: Task, request_json: str, routed_json: str) -> None:
    """The Ceiling, only for escalated nodes."""
    _follow(self, handle_stage2(request_json, routed_json, deps()))
