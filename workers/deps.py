"""The collaborators a worker process needs, built once from ``Settings`` at boot.

Handlers take a ``Deps`` argument instead of reaching for globals, so tests build one
from real Redis and a scripted judge without patching anything.
"""

from __future__ import annotations

from dataclasses import dataclass

import redis

from workers.evaluate.stages import WallJudge
from workers.judges.base import Judge
from workers.judges.factory import build_judge
from workers.judges.wall import stage1_judge
from workers.ledger import CostLedger
from workers.settings import Settings
from workers.stream import ResultStream
from workers.tries import TryCounter


@dataclass(frozen=True, slots=True)
class Deps:
    """Everything a handler touches outside the pure engine."""

    settings: Settings
    redis: redis.Redis
    stream: ResultStream
    judge: Judge
    ledger: CostLedger
    tries: TryCounter
    wall_judge: WallJudge | None = None
    """Stage 1's model judge; None for the built-in judge, whose Wall is the heuristics."""


def redis_client(settings: Settings, *, max_connections: int = 64) -> redis.Redis:
    """A client with a blocking pool: threads wait for a connection instead of failing."""
    pool = redis.BlockingConnectionPool.from_url(
        settings.redis_url,
        max_connections=max_connections,
        timeout=10,
        socket_timeout=10,
        socket_connect_timeout=5,
        health_check_interval=25,
        retry_on_timeout=True,
    )
    return redis.Redis(connection_pool=pool)


def build_deps(settings: Settings, *, judge: Judge | None = None) -> Deps:
    """Wire the real collaborators; ``judge`` overrides the configured backend."""
    client = redis_client(settings)
    judge = judge if judge is not None else build_judge(settings)
    return Deps(
        settings=settings,
        redis=client,
        stream=ResultStream(
            client,
            key_prefix=settings.key_prefix,
            retention_s=settings.stream_retention_s,
            dedup_ttl_s=settings.dedup_ttl_s,
        ),
        judge=judge,
        ledger=CostLedger(client, settings.key_prefix),
        tries=TryCounter(client, settings.key_prefix, ttl_s=settings.visibility_timeout_s * 4),
        wall_judge=stage1_judge(judge),
    )
