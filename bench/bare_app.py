"""The baseline of ``bench.overhead``: a bare Celery task that only XADDs to a stream.

It runs with exactly the fleet's Celery configuration (``celery_config``: acks late,
prefetch 1, the same transport options) and the fleet's worker command line (pool,
concurrency, flags), so the difference the benchmark measures is the fleet's own work:
validation, the engine, two queue hops, the idempotent publish and the ledger.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import redis
from celery import Celery

from workers.connections import redis_client
from workers.fleet.app import celery_config
from workers.fleet.queues import Queue
from workers.local.launcher import worker_command
from workers.settings import Settings, load_settings

QUEUE = "bench-bare"
TASK = "bench.bare.roundtrip"

_SETTINGS = load_settings()  # a worker process of its own: its environment is its config
app = Celery("bench-bare")
app.conf.update(
    {
        **celery_config(_SETTINGS),
        "task_routes": {TASK: {"queue": QUEUE}},
        "task_default_queue": QUEUE,
    }
)


@cache
def _client() -> redis.Redis:
    return redis_client(_SETTINGS)


def _roundtrip(stream: str, key: str) -> None:
    _client().xadd(stream, {"review_key": key})


roundtrip: Any = app.task(name=TASK)(_roundtrip)


def bare_command(like: Queue, *, concurrency: int, name: str) -> list[str]:
    """The fleet's worker command for ``like``, pointed at this app and its queue."""
    command = worker_command(like, concurrency=concurrency, name=name)
    command[command.index("workers.fleet.worker")] = "bench.bare_app"
    command[command.index(like.value, command.index("-Q"))] = QUEUE
    return command


def client_app(settings: Settings) -> Celery:
    """A producer-side app for the bare task, on ``settings``' broker."""
    producer = Celery("bench-bare-client")
    producer.conf.update(
        {
            **celery_config(settings),
            "task_routes": {TASK: {"queue": QUEUE}},
            "task_default_queue": QUEUE,
        }
    )
    return producer
