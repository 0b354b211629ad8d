"""The collaborators a worker process needs, built once from ``Settings`` at boot.

Handlers take a ``Deps`` argument instead of reaching for globals, so tests build one
from real Redis and a scripted judge without patching anything.
"""

from __future__ import annotations

from dataclasses import dataclass

import redis

from schemas.judging import JudgeTier
from workers.connections import redis_client
from workers.endpoint import ToolUse
from workers.evaluate.stage1 import WallJudge
from workers.fleet.tries import TryCounter
from workers.human.gate import HumanGate, build_gate
from workers.judges.base import Judge
from workers.judges.builtin import BuiltinJudge
from workers.judges.cache import CachedJudge
from workers.judges.factory import build_judge
from workers.judges.prompt import RUBRIC_VERSION
from workers.judges.ratelimit import RateLimitedJudge
from workers.judges.wall import model_wall_judge
from workers.keys import Keys
from workers.lookups.lane import Lane
from workers.lookups.steps import lane_wanted
from workers.observe.traced_judge import TracedJudge
from workers.records.attempts import AttemptStore
from workers.records.bookkeeping import Bookkeeping
from workers.records.calibration import CalibrationStore
from workers.records.marks import BookkeepingMarks
from workers.records.outcomes import OutcomeStore
from workers.results.dags import DagRegistry
from workers.results.ledger import CostLedger
from workers.results.stream import ResultStream
from workers.settings import Settings


@dataclass(frozen=True, slots=True)
class Deps:
    """Everything a handler touches outside the pure engine."""

    settings: Settings
    redis: redis.Redis
    stream: ResultStream
    judge: Judge
    ledger: CostLedger
    tries: TryCounter
    gate: HumanGate
    """The human gate: the review queue and the verdict desk."""
    dags: DagRegistry
    """Registered DAG shapes: Stage 1 derives a request's missing downstream from them."""
    records: Bookkeeping
    """Each review's memory: the history read before the verdict, the publish bookkeeping."""
    calibration: CalibrationStore
    """The learned router's model, cached for the process; None from it means the prior."""
    wall_judge: WallJudge | None = None
    """Stage 1's model judge; None for the built-in judge, whose Wall is the heuristics."""
    lane: Lane | None = None
    """The network lane (fleet-wide cache and politeness); None while fetching is off."""

    @property
    def keys(self) -> Keys:
        """Every Redis key of this deployment."""
        return self.settings.keys

    def close(self) -> None:
        """Close the client and its pool.

        ``Redis.close`` leaves open a pool it was given (``redis_client`` gives it one):
        its sockets, in a cycle with their parsers, would wait for a garbage collection.
        """
        self.redis.close()
        self.redis.connection_pool.disconnect()
        if self.lane is not None:
            self.lane.close()


def build_deps(settings: Settings, *, judge: Judge | None = None) -> Deps:
    """Wire the real collaborators; ``judge`` overrides the configured backend."""
    client = redis_client(settings)
    if judge is None:
        base = build_judge(settings)
        guarded = guarded_judge(base, client, settings)
    else:
        base = guarded = judge
    served = TracedJudge(guarded, type(base).__name__)
    records = build_records(client, settings)
    return Deps(
        settings=settings,
        redis=client,
        stream=ResultStream(
            client,
            settings.keys,
            retention_s=settings.stream_retention_s,
            dedup_ttl_s=settings.dedup_ttl_s,
        ),
        judge=served,
        ledger=CostLedger(client, settings.keys),
        tries=TryCounter(client, settings.keys, ttl_s=settings.visibility_timeout_s * 4),
        gate=build_gate(client, settings, attempts=records.attempts, outcomes=records.outcomes),
        dags=DagRegistry(client, settings.keys, ttl_s=settings.stream_retention_s),
        records=records,
        calibration=CalibrationStore(
            client, settings.keys, refresh_s=settings.calibration_refresh_s
        ),
        wall_judge=None if isinstance(base, BuiltinJudge) else model_wall_judge(served),
        lane=Lane.build(settings, client) if lane_wanted(settings) else None,
    )


def build_records(client: redis.Redis, settings: Settings) -> Bookkeeping:
    """The review memory of the deployment ``settings`` describe, on ``client``."""
    keys, retention_s = settings.keys, settings.stream_retention_s
    return Bookkeeping(
        attempts=AttemptStore(client, keys, kept=settings.attempts_kept, ttl_s=retention_s),
        outcomes=OutcomeStore(
            client, keys, kept=settings.outcomes_kept, ttl_s=settings.outcome_retention_s
        ),
        marks=BookkeepingMarks(client, keys, ttl_s=retention_s),
    )


def guarded_judge(judge: Judge, client: redis.Redis, settings: Settings) -> Judge:
    """A model judge behind the fleet-wide verdict cache and rate limiter, when set."""
    if isinstance(judge, BuiltinJudge):
        return judge  # deterministic and free: nothing to cache or limit
    if settings.judge_rate_limit_per_s is not None:
        judge = RateLimitedJudge(
            judge,
            client,
            settings.keys,
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
        judged_by = [
            RUBRIC_VERSION,
            settings.stage1_model,
            settings.stage2_model,
            str(settings.judge_temperature),
        ]
        # Another endpoint or another way of asking is another judge; the hosted API's
        # keys stay as they were.
        if settings.anthropic_base_url is not None:
            judged_by.append(settings.anthropic_base_url)
        if settings.judge_tool_use is not ToolUse.FORCED:
            judged_by.append(f"tool_use={settings.judge_tool_use.value}")
        namespace = "|".join(judged_by)
        judge = CachedJudge(
            judge, client, settings.keys, namespace=namespace, ttl_s=settings.judge_cache_ttl_s
        )
    return judge
