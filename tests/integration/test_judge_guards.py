"""The fleet-wide verdict cache and rate limiter, on real Redis."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
import redis

from schemas.judging import JudgeTask, JudgeTier, JudgeVerdict, TokenUsage
from schemas.quality import CEILING_DIMENSIONS
from schemas.request import NodeOutput, OutputKind
from tests.verdicts import paid_verdict
from workers.errors import JudgeRetryableError
from workers.judges.cache import CachedJudge
from workers.judges.ratelimit import RateLimitedJudge
from workers.keys import Keys
from workers.testing.scripted_judge import ScriptedJudge

pytestmark = pytest.mark.integration
MODELS = {tier: f"model-{tier.value}" for tier in JudgeTier}


@pytest.fixture
def client(redis_url: str) -> Iterator[redis.Redis]:
    connection = redis.Redis.from_url(redis_url)
    yield connection
    connection.close()


@pytest.fixture
def prefix() -> str:
    return f"g-{uuid.uuid4().hex[:8]}"


def task(content: str, tier: JudgeTier = JudgeTier.CEILING) -> JudgeTask:
    return JudgeTask(
        tier=tier,
        dimensions=CEILING_DIMENSIONS,
        output=NodeOutput(kind=OutputKind.TEXT, content=content),
    )


def _paid(score: float) -> JudgeVerdict:
    return paid_verdict(score, model="m", tokens=(900, 120), cost_usd=0.004)


def test_the_same_content_gets_the_same_verdict_from_any_worker_without_paying_again(
    client: redis.Redis, prefix: str
) -> None:
    inner = ScriptedJudge([_paid(0.81), _paid(0.42)])
    worker_a = CachedJudge(inner, client, Keys(prefix), namespace="rubric-1", ttl_s=60)
    worker_b = CachedJudge(inner, client, Keys(prefix), namespace="rubric-1", ttl_s=60)

    first = worker_a.evaluate(task("the output"))
    again = worker_b.evaluate(task("the output"))
    other = worker_b.evaluate(task("another output"))

    assert len(inner.tasks) == 2
    assert again.scores == first.scores
    assert (again.calls, again.cost_usd, again.usage) == (0, 0.0, TokenUsage())
    assert first.cost_usd == pytest.approx(0.004)
    assert other.scores != first.scores


def test_a_new_rubric_version_does_not_reuse_old_verdicts(client: redis.Redis, prefix: str) -> None:
    inner = ScriptedJudge([_paid(0.81), _paid(0.6)])
    CachedJudge(inner, client, Keys(prefix), namespace="rubric-1", ttl_s=60).evaluate(task("x"))
    CachedJudge(inner, client, Keys(prefix), namespace="rubric-2", ttl_s=60).evaluate(task("x"))
    assert len(inner.tasks) == 2


def test_the_token_bucket_is_shared_by_every_worker_of_the_fleet(
    client: redis.Redis, prefix: str
) -> None:
    inner = ScriptedJudge(default=_paid(0.7))

    def limited() -> RateLimitedJudge:
        return RateLimitedJudge(
            inner,
            client,
            Keys(prefix),
            models=MODELS,
            rate_per_s=0.01,
            burst=3,
            max_wait_s=0.2,
        )

    worker_a, worker_b = limited(), limited()
    worker_a.evaluate(task("1"))
    worker_b.evaluate(task("2"))
    worker_a.evaluate(task("3"))
    with pytest.raises(JudgeRetryableError, match="rate limit for model-ceiling"):
        worker_b.evaluate(task("4"))
    assert len(inner.tasks) == 3
    # Another model has its own bucket.
    worker_b.evaluate(task("5", tier=JudgeTier.WALL))
    assert len(inner.tasks) == 4
