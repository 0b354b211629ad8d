"""The cost ledger against a real Redis (db 15, a unique key prefix per test)."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
import redis
from pydantic import SecretStr

from schemas.judging import JudgeTask, JudgeTier, TokenUsage
from schemas.quality import Dimension
from schemas.request import NodeOutput, OutputKind
from tests.infrastructure import scratch_redis
from workers.judges.anthropic_judge import AnthropicJudge
from workers.judges.retry import RetryPolicy
from workers.keys import Keys
from workers.results.ledger import CostLedger
from workers.settings import Settings
from workers.testing.messages_api.server import Reply, running_server


@pytest.fixture
def scratch() -> Iterator[tuple[redis.Redis, str]]:
    with scratch_redis("ledger") as found:
        yield found


@pytest.fixture
def client(scratch: tuple[redis.Redis, str]) -> redis.Redis:
    return scratch[0]


@pytest.fixture
def prefix(scratch: tuple[redis.Redis, str]) -> str:
    return scratch[1]


@pytest.fixture
def ledger(client: redis.Redis, prefix: str) -> CostLedger:
    return CostLedger(client, Keys(prefix), ttl_s=600)


def test_add_accumulates_and_sets_expiry(
    ledger: CostLedger, client: redis.Redis, prefix: str
) -> None:
    assert ledger.total("dag-1") == 0.0
    assert ledger.add("dag-1", 0.25) == pytest.approx(0.25)
    assert ledger.add("dag-1", 0.125) == pytest.approx(0.375)
    assert ledger.total("dag-1") == pytest.approx(0.375)
    assert ledger.total("dag-2") == 0.0
    assert Keys(prefix).cost("dag-1") == f"{prefix}:cost:dag-1"
    assert 0 < client.ttl(Keys(prefix).cost("dag-1")) <= 600


def test_has_budget(ledger: CostLedger) -> None:
    assert ledger.has_budget("dag", None)
    assert ledger.has_budget("dag", 0.1)
    ledger.add("dag", 0.1)
    assert not ledger.has_budget("dag", 0.1)
    assert ledger.has_budget("dag", 0.11)
    assert ledger.has_budget("dag", None)


def test_charge_is_idempotent_per_review_key(
    ledger: CostLedger, client: redis.Redis, prefix: str
) -> None:
    assert ledger.charge("dag", "review-a", 0.5) == (True, 0.5)
    assert ledger.charge("dag", "review-a", 0.5) == (False, 0.5)
    assert ledger.charge("dag", "review-b", 0.25) == (True, 0.75)
    assert ledger.total("dag") == pytest.approx(0.75)
    assert 0 < client.ttl(Keys(prefix).charged("review-a")) <= 600


def test_concurrent_charges_count_each_review_once(ledger: CostLedger) -> None:
    keys = [f"review-{i % 50}" for i in range(400)]  # every review redelivered 8 times
    with ThreadPoolExecutor(16) as pool:
        outcomes = list(pool.map(lambda key: ledger.charge("dag", key, 0.01), keys))
    assert sum(charged for charged, _ in outcomes) == 50
    assert ledger.total("dag") == pytest.approx(0.5)


@pytest.mark.parametrize("bad", [-0.01, float("nan"), float("inf")])
def test_bad_amounts_are_refused(ledger: CostLedger, bad: float) -> None:
    with pytest.raises(ValueError, match="finite, non-negative"):
        ledger.add("dag", bad)
    with pytest.raises(ValueError):
        ledger.charge("dag", "review", bad)
    assert ledger.total("dag") == 0.0


def test_ledger_total_matches_the_usage_the_server_returned(ledger: CostLedger) -> None:
    tasks = [
        JudgeTask(
            tier=tier,
            dimensions=(Dimension.CORRECTNESS, Dimension.CLARITY),
            output=NodeOutput(kind=OutputKind.TEXT, content=f"output {i}"),
        )
        for i, tier in enumerate((JudgeTier.WALL, JudgeTier.CEILING, JudgeTier.CEILING))
    ]
    with running_server() as server:
        settings = Settings(
            anthropic_api_key=SecretStr(server.api_key), anthropic_base_url=server.base_url
        )
        fast = RetryPolicy(max_attempts=3, budget_s=5, base_delay_s=0.01, max_delay_s=0.02)
        server.script(Reply.ok(), Reply.overloaded(), Reply.ok(), Reply.malformed())
        with AnthropicJudge(settings, fast) as judge:
            verdicts = [judge.evaluate(task) for task in tasks]
        for i, verdict in enumerate(verdicts):
            ledger.charge("dag", f"review-{i}", verdict.cost_usd)
            ledger.charge("dag", f"review-{i}", verdict.cost_usd)  # a redelivery
        exchanges = server.requests
    assert [r.status for r in exchanges] == [200, 529, 200, 200, 200]
    expected = 0.0
    for exchange in exchanges:
        if exchange.usage is not None and exchange.body is not None:
            usage = TokenUsage(**exchange.usage)
            expected += settings.price_of(exchange.body["model"]).cost(usage)
    assert expected > 0
    assert ledger.total("dag") == pytest.approx(expected, rel=1e-9)
    assert sum(v.calls for v in verdicts) == 5
