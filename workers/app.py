"""The Celery app: three queues, one routes mapping, settings that do not lose work.

Why each reliability setting (see DESIGN.md, "What the stack really promises"):

- ``task_acks_late``: a message is acked after its task ran, so a worker that dies
  mid-task leaves it unacked and the broker redelivers it.
- ``task_reject_on_worker_lost``: without it Celery acks the message of a pool process
  killed by a signal, and the review is lost.
- ``task_acks_on_failure_or_timeout = False``: a task that fails in a way our handlers
  could not catch (Redis gone while publishing) stays unacked and comes back; handlers
  catch everything else and bound it with our own try counter.
- ``visibility_timeout`` above every hard time limit, in all three places Celery reads it:
  Redis redelivers any message unacked for longer, even one still running.
- prefetch of 1: a slow Stage 2 call holds no other message hostage (prefetched
  messages count against the visibility timeout too).
- soft/hard time limits per queue: a hung judge call ends as a retry, then an error entry.
- results go to our stream, not Celery's result backend (``task_ignore_result``).
"""

from __future__ import annotations

from typing import Any

from celery import Celery

from workers.queues import TASK_ROUTES, Queue
from workers.settings import Settings


def celery_config(settings: Settings) -> dict[str, Any]:
    """Celery configuration derived from our settings."""
    visibility = settings.visibility_timeout_s
    transport = {
        "visibility_timeout": visibility,
        "unacked_restore_interval": 5,
        "unacked_restore_throttle": 1,
        "health_check_interval": 25,
        "socket_keepalive": True,
        "retry_on_timeout": True,
    }
    return {
        "broker_url": settings.redis_url,
        "broker_transport_options": transport,
        "result_backend_transport_options": {"visibility_timeout": visibility},
        "visibility_timeout": visibility,
        "broker_connection_retry_on_startup": True,
        "broker_connection_timeout": 5,
        "task_routes": TASK_ROUTES,
        "task_default_queue": Queue.STAGE1.value,
        "task_create_missing_queues": True,
        "task_serializer": "json",
        "accept_content": ["json"],
        "task_ignore_result": True,
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "task_acks_on_failure_or_timeout": False,
        "worker_prefetch_multiplier": 1,
        "worker_cancel_long_running_tasks_on_connection_loss": True,
        "worker_soft_shutdown_timeout": 30.0,
        "worker_hijack_root_logger": False,
        "task_publish_retry_policy": {
            "max_retries": 3,
            "interval_start": 0.2,
            "interval_step": 0.5,
            "interval_max": 1.0,
        },
    }


def create_app(settings: Settings) -> Celery:
    """A Celery app for ``settings``; tasks are named through ``include``, not imported."""
    celery = Celery("windags", include=["workers.tasks"])
    celery.conf.update(celery_config(settings))
    celery.conf.windags_settings = settings
    return celery


#: The app ``celery -A workers.app`` finds. Building it reads settings and connects nothing.
app = create_app(Settings())
