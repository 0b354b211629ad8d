"""The collaborators a worker process needs, built once from ``Settings`` at boot.

Handlers take a ``Deps`` argument instead of reaching for globals, so tests build one
from real Redis and a scripted judge without patching anything.
"""

from __future__ import annotations

from dataclasses import dataclass

import redis

from schemas.judging import JudgeTier
from workers.evaluate.stages import WallJudge
from workers.judge_guards import CachedJudge, RateLimitedJudge
from workers.judges.base import Judge
from workers.judges.builtin import BuiltinJudge
from workers.judges.factory import build_judge
from workers.judges.prompt import RUBRIC_VERSION
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
    judge = judge if judge is not None else guarded_judge(build_judge(settings), client, settings)
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


def guarded_judge(judge: Judge, client: redis.Redis, settings: Settings) -> Judge:
    """A model judge behind the fleet-wide verdict cache and rate limiter, when set."""
    if isinstance(judge, BuiltinJudge):
        return judge  # deterministic and free: nothing to cache or limit
    if settings.judge_rate_limit_per_s is not None:
        judge = RateLimitedJudge(
            judge,
            client,
            key_prefix=settings.key_prefix,
            models={
                JudgeTier.WALL: settings.stage1_model,
                JudgeTier.CEILING: settings.stage2_model,
                JudgeTier.PAIRWISE: settings.stage2_model,
            },
            rate_per_s=settings.judge_rate_limit_per_s,
            burst=settings.judge_rate_burst,
            max_wait_s=settings.judge_timeout_s,
        )
    if settings.judge_cache_ttl_s > 0:
        namespace = "|".join(
            [
                RUBRIC_VERSION,
                settings.stage1_model,
                settings.stage2_model,
                str(settings.judge_temperature),
            ]
        )
        judge = CachedJudge(
            judge,
            client,
            key_prefix=settings.key_prefix,
            namespace=namespace,
            ttl_s=settings.judge_cache_ttl_s,
        )
    return judge
