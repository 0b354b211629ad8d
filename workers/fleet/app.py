"""The Celery app: three queues, one routes mapping, settings that do not lose work.

Why each reliability setting (docs/architecture.md, "What the stack promises"):

- ``task_acks_late``: a message is acked after its task ran, so a worker that dies
  mid-task leaves it unacked and the broker redelivers it.
- ``task_reject_on_worker_lost``: without it Celery acks the message of a pool process
  killed by a signal, and the review is lost.
- ``task_acks_on_failure_or_timeout = False``: a failed task is not acked. Celery then
  *rejects it without requeue*, which on Redis deletes it: so ``ReviewTask`` turns a
  broker or Redis connection fault that escapes a task (Redis gone mid-try, or while
  publishing the next hop) into ``Interrupted``, a requeue that replays the try
  (``outage.py``), and the retry ``Task.retry`` could not publish into
  ``Reject(requeue=True)``; the message comes back at once, or, while Redis is still
  down, as soon as it answers. Handlers catch everything else and bound it with our own
  try counter.
- ``visibility_timeout`` above every hard time limit, in all three places Celery reads it:
  Redis redelivers any message unacked for longer, even one still running.
- the restore sweep (every ``RESTORE_EVERY_S``, by every worker) holds a mutex that lives
  ``RESTORE_EVERY_S`` too, not kombu's 300 s: a sweeper killed mid-sweep, or whose release
  met Redis going down, left it behind, and no worker restored anything for five minutes,
  whatever the visibility timeout (the chaos test, at 13 s, waits 90 s for the reviews a
  killed Stage 1 had reserved: lost, with a mutex planted as such a sweeper leaves it).
  Two sweeps at once are harmless: each restore is a transaction that finds the record
  gone the second time.
- delivery: ``transport/redis_transport.py`` pops a message and records it as unacked in one
  Lua script, so a worker killed as Redis hands it a message loses nothing (kombu's
  BRPOP-then-write leaves a window where the message is nowhere). The record names the
  taking process, whose lease (``transport/leases.py``) expires ``LEASE_TTL_S`` after a
  SIGKILL; the restore sweep then hands back what it held (``transport/owner_sweep.py``)
  instead of waiting for the visibility timeout.
- prefetch of 1: a slow Stage 2 call holds no other message hostage (prefetched
  messages count against the visibility timeout too).
- soft/hard time limits per queue. Celery enforces both in the prefork pool and the hard
  one in the gevent pool (a ``gevent.Timeout`` in the task's greenlet; the message is not
  acked, so Redis redelivers it after the visibility timeout); under the threads pool the
  Procfile uses, the bound is the judge's own timeout and retry budget, which
  ``Settings`` refuses to boot unless they fit inside each soft limit.
- results go to our stream, not Celery's result backend (``task_ignore_result``).
- bounded waits: every broker connection has socket connect and read timeouts
  (``Settings.redis_socket_timeout_s``, ``redis_connect_timeout_s``): a Redis that accepts
  connections but never answers fails a call instead of hanging it.
- the channel quarantines what it cannot deliver (``transport/redis_transport.py``): it
  accepts only our task names, and messages up to ``message_limit``.
- ``sentinel://`` URLs: the same channel on kombu's Sentinel pools
  (``workers/fleet/transport/sentinel.py``): after a failover a worker reconnects to the promoted
  replica as after a Redis restart, and what it held comes back as after a kill. Its
  connections keep that channel when kombu moves them to the next Sentinel's address
  (``transport/connection.py``; kombu would take kombu's own transport from the scheme).
"""

from __future__ import annotations

from typing import Any

from celery import Celery, Task
from celery.exceptions import Reject, SoftTimeLimitExceeded

from workers.fleet.outage import CONNECTION_FAULTS, Interrupted, InterruptibleRequest
from workers.fleet.queues import TASK_ROUTES, Queue, TaskName
from workers.fleet.transport.connection import FleetAMQP
from workers.fleet.transport.redis_transport import TRANSPORT
from workers.fleet.transport.sentinel import SENTINEL_TRANSPORT
from workers.redis_urls import is_sentinel
from workers.settings import Settings

#: Redis connections per broker channel, and producers per process. A gevent worker runs
#: a hundred tasks in one process, each acking and publishing its next hop through them:
#: kombu's and Celery's 10 made tasks wait on each other, failed acks with
#: MaxConnectionsError, and after a Redis restart left a worker that no longer consumed.
MAX_CONNECTIONS = 256

#: Seconds between two restore sweeps of a worker (overdue ``unacked`` records back to their
#: queues), and the most a sweeper that died holding the sweep's mutex holds the others back.
RESTORE_EVERY_S = 5


class ReviewTask(Task):  # type: ignore[misc]  # celery ships no type hints
    """Requeue, never drop, a task whose Redis connection failed under it.

    Two ways a fault reaches here: it escapes the task (Redis gone mid-try, or while
    publishing the next hop): an outage interrupted the try, and the message goes back as
    a replay of it (``Interrupted``); or ``Task.retry`` could not publish the retry and
    raised ``Reject(requeue=False)``, which on Redis deletes the message (a broker-restart
    run lost a review that way): requeued, it is that retry, and counts as one.
    """

    #: Tells the channel that an ``Interrupted`` task's requeue is a replay.
    Request = InterruptibleRequest

    #: Our try counter bounds the retries that count, a Stage 2 claim's lifetime the waits
    #: for it. Celery's default of 3 (which ``retry(max_retries=None)`` falls back to) made
    #: a fourth wait raise MaxRetriesExceededError, and the message was dropped: after a
    #: Redis restart a gevent Stage 2 whose cancelled task left its claim behind lost
    #: reviews that way.
    max_retries = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run the task; a connection fault hands the message back as a replay of this try.

        So does a soft time limit met outside the handlers' guard (which counts the try and
        bounds it): a prefork child that Celery replaced on a lost connection built its
        collaborators (the judge's TLS context) past Stage 1's 10 s on a loaded machine, and
        the review was rejected, that is deleted (seen in the Redis-restart fault test).
        """
        try:
            return super().__call__(*args, **kwargs)
        except CONNECTION_FAULTS as exc:
            raise Interrupted(exc) from exc
        except SoftTimeLimitExceeded as exc:
            raise Reject(exc, requeue=True) from exc
        except Reject as exc:
            if not exc.requeue and isinstance(exc.reason, CONNECTION_FAULTS):
                raise Reject(exc.reason, requeue=True) from exc
            raise


def celery_config(settings: Settings) -> dict[str, Any]:
    """Celery configuration derived from our settings."""
    visibility = settings.visibility_timeout_s
    transport = {
        "visibility_timeout": visibility,
        "unacked_restore_interval": RESTORE_EVERY_S,
        "unacked_restore_throttle": 1,
        "unacked_mutex_expire": RESTORE_EVERY_S,
        "health_check_interval": 25,
        "socket_keepalive": True,
        "max_connections": MAX_CONNECTIONS,
        "retry_on_timeout": True,
        "socket_timeout": settings.redis_socket_timeout_s,
        "socket_connect_timeout": settings.redis_connect_timeout_s,
        # Every key and channel kombu names (queue lists, unacked, bindings, broadcasts)
        # under the deployment's prefix: fleets share a Redis database, never a task.
        "global_keyprefix": settings.keys.broker,
        "quarantine_key": settings.keys.quarantine,
        "quarantine_retention_s": settings.stream_retention_s,
        "accepted_tasks": [name.value for name in TaskName],
        "task_queues": [queue.value for queue in Queue],
        # What each queue has in flight, for KEDA (deploy/k8s/components/keda).
        "reserved_keys": {
            queue.value: settings.keys.reserved(queue.value).removeprefix(settings.keys.broker)
            for queue in Queue
        },
        # Each take names its process, whose lease lives while it does: a worker killed
        # with SIGKILL has what it held restored once the lease is gone, not after the
        # visibility timeout (transport/leases.py, transport/owner_sweep.py).
        "lease_key_prefix": settings.keys.lease("").removeprefix(settings.keys.broker),
        "owner_sweep_key": settings.keys.owner_sweep.removeprefix(settings.keys.broker),
        "max_message_bytes": message_limit(settings),
        # An eta further ahead would wait past the visibility timeout and be redelivered.
        "max_eta_s": settings.visibility_timeout_s / 2,
        # One key per queue: reviews have no priorities, and the delivery that a kill
        # cannot lose (transport/redis_transport.py) waits on exactly one key.
        "priority_steps": [0],
    }
    config: dict[str, Any] = {
        "broker_url": settings.redis_url,
        "broker_transport_options": transport,
        "result_backend_transport_options": {"visibility_timeout": visibility},
        "visibility_timeout": visibility,
        "broker_connection_retry_on_startup": True,
        "broker_pool_limit": MAX_CONNECTIONS,
        "broker_connection_timeout": 5,
        "task_routes": TASK_ROUTES,
        "task_annotations": _time_limits(settings),
        "task_default_queue": Queue.STAGE1.value,
        "task_create_missing_queues": True,
        "task_serializer": "json",
        # Every byte of a message Redis reads, copies into ``unacked``, logs and hands
        # back, about five times per hop: zlib (C) halves a hop's bytes for some tens of
        # microseconds of a worker's CPU (``bench.redis_cost``). The inspection bounds
        # what a body may inflate to before kombu inflates it (``transport/inspection.py``).
        "task_compression": "zlib" if settings.compress_messages else None,
        "accept_content": ["json"],
        "task_ignore_result": True,
        # The (disabled) result backend is one object per app, not one per thread: under
        # gevent a thread is each task's greenlet, and every hop built a new one.
        "result_backend_thread_safe": True,
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "task_acks_on_failure_or_timeout": False,
        "worker_prefetch_multiplier": 1,
        "worker_cancel_long_running_tasks_on_connection_loss": True,
        "worker_soft_shutdown_timeout": 30.0,
        "worker_hijack_root_logger": False,
        # Celery beat (inside the router worker, ``-B``) asks for a calibration refit; when
        # it last did is kept in Redis under the prefix (``workers/fleet/beat.py``).
        "beat_scheduler": "workers.fleet.beat:RedisScheduler",
        "beat_schedule": {
            "calibration-refit": {
                "task": TaskName.REFIT.value,
                "schedule": settings.calibration_refit_s,
            }
        },
        "task_publish_retry_policy": {
            "max_retries": 3,
            "interval_start": 0.2,
            "interval_step": 0.5,
            "interval_max": 1.0,
        },
    }
    if settings.redis_url.startswith("redis://"):
        # The same transport without a client object per command (transport/redis_transport.py).
        config["broker_transport"] = TRANSPORT
    elif is_sentinel(settings.redis_url):
        # The primary the Sentinels name, and after a failover the replica they promote.
        config["broker_transport"] = SENTINEL_TRANSPORT
        transport["master_name"] = settings.redis_sentinel_master
    return config


def message_limit(settings: Settings) -> int:
    """The largest queue message a worker reads; larger ones are quarantined unread.

    Generous on purpose: a request up to ``max_request_bytes`` may grow 6x as a JSON
    string of escapes and 4/3 as base64, and is then refused with an ``oversized``
    entry on its DAG's stream, which tells its producer more than a quarantine does.
    """
    return 8 * settings.max_request_bytes + 64 * 1024


def _time_limits(settings: Settings) -> dict[str, dict[str, int]]:
    """Soft and hard limits per task, from settings (the router shares Stage 1's)."""
    stage1 = {
        "soft_time_limit": settings.stage1_soft_limit_s,
        "time_limit": settings.stage1_hard_limit_s,
    }
    stage2 = {
        "soft_time_limit": settings.stage2_soft_limit_s,
        "time_limit": settings.stage2_hard_limit_s,
    }
    refs = {"soft_time_limit": settings.refs_soft_limit_s, "time_limit": settings.refs_hard_limit_s}
    return {
        TaskName.STAGE1.value: stage1,
        TaskName.ROUTER.value: stage1,
        TaskName.STAGE2.value: stage2,
        TaskName.REFS.value: refs,
        TaskName.REFIT.value: stage2,
    }


def create_app(settings: Settings) -> Celery:
    """A Celery app for ``settings``; connects nothing.

    Tasks are named through ``include``: a worker imports ``workers.fleet.tasks`` at boot,
    a client that only sends tasks never does.
    """
    celery = Celery(
        "windags",
        include=["workers.fleet.tasks", "workers.fleet.signals"],
        task_cls=ReviewTask,
        amqp=FleetAMQP,
    )
    celery.conf.update(celery_config(settings))
    celery.conf.windags_settings = settings
    return celery
