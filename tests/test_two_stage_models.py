"""Stage 1 asks the cheap model for the Wall, Stage 2 the expensive one for the Ceiling."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import SecretStr

from schemas.judging import DimensionVerdict, JudgeTier, JudgeVerdict
from schemas.quality import WALL_DIMENSIONS, Dimension, ScoreStatus
from schemas.request import ReviewRequest
from schemas.result import Decision
from workers.errors import JudgeRetryableError
from workers.intake import request_from_obj
from workers.judges.anthropic_judge import AnthropicJudge
from workers.judges.builtin import BuiltinJudge
from workers.judges.retry import RetryPolicy
from workers.judges.wall import model_wall_judge, stage1_judge
from workers.review import review
from workers.settings import Settings
from workers.testing.messages_api.server import Reply, ServerHandle
from workers.testing.scripted_judge import ScriptedJudge

FAST = RetryPolicy(max_attempts=2, budget_s=5, base_delay_s=0.01, max_delay_s=0.02)
GOOD_MARKDOWN = (
    "# Release 2.4\n\n## Changes\n\n- The export job streams rows instead of loading them.\n"
    "- Webhook retries back off exponentially, capped at 60 seconds.\n\n## Upgrade notes\n\n"
    "Run the migration before deploying the workers.\n"
)


def request(**changes: Any) -> ReviewRequest:
    body: dict[str, Any] = {
        "dag_id": "d",
        "node_id": "notes",
        "skill": {"id": "docs", "success_rate": 0.95},
        "output": {"kind": "markdown", "content": GOOD_MARKDOWN},
        "task": "Write the release notes with changes and upgrade notes",
    }
    body.update(changes)
    return request_from_obj(body, max_request_bytes=100_000, max_output_chars=50_000)


@pytest.fixture
def settings(server: ServerHandle) -> Settings:
    return Settings(
        anthropic_api_key=SecretStr(server.api_key),
        anthropic_base_url=server.base_url,
        judge_timeout_s=2.0,
    )


def test_a_final_deliverable_is_judged_by_haiku_then_sonnet_through_the_real_sdk(
    server: ServerHandle, settings: Settings
) -> None:
    wall = {d.value: 0.9 for d in WALL_DIMENSIONS}
    ceiling = {"correctness": 0.9, "completeness": 0.85, "clarity": 0.9, "relevance": 0.88}
    server.script(Reply.ok(wall, justification="wall evidence"), Reply.ok(ceiling))
    with AnthropicJudge(settings, FAST) as judge:
        result = review(
            request(flags={"final_deliverable": True}),
            judge,
            stage2_price=settings.price_of(settings.stage2_model),
            wall_judge=stage1_judge(judge),
        )

    models = [exchange.body["model"] for exchange in server.requests if exchange.body]
    assert models == [settings.stage1_model, settings.stage2_model]
    assert result.decision is Decision.ACCEPT
    assert result.stage2 is not None and result.stage2.model == settings.stage2_model
    assert result.quality.correctness.value == pytest.approx(0.9)
    assert "judge: wall evidence" in result.quality.grounding.justification
    returned = [exchange.usage for exchange in server.requests]
    assert all(usage is not None for usage in returned)
    assert result.envelope.tokens.output_tokens == sum(u["output_tokens"] for u in returned if u)
    haiku, sonnet = (settings.price_of(m) for m in models)
    assert result.envelope.review_cost_usd > 0
    assert result.envelope.review_cost_usd == pytest.approx(
        sum(
            price.cost(type(result.envelope.tokens).model_validate_json(json.dumps(u)))
            for price, u in zip((haiku, sonnet), returned, strict=True)
            if u is not None
        ),
        rel=1e-6,
    )


def test_a_low_wall_score_from_the_model_fails_the_wall_without_stage2(
    server: ServerHandle, settings: Settings
) -> None:
    server.script(Reply.ok({"substance": 0.2, "consistency": 0.9, "grounding": 0.9}))
    with AnthropicJudge(settings, FAST) as judge:
        result = review(
            request(downstream=[{"node_id": "next", "cost_usd": 0.1, "critical": True}]),
            judge,
            stage2_price=settings.price_of(settings.stage2_model),
            wall_judge=stage1_judge(judge),
        )
    assert server.calls == 1
    assert result.stage1.wall.passed is False
    assert result.quality.substance.value == pytest.approx(0.2)
    assert result.stage2 is None


def test_a_failing_wall_judge_is_recorded_and_leaves_the_heuristic_scores() -> None:
    judge = ScriptedJudge([JudgeRetryableError("529 overloaded after 3 attempts")])
    report_result = review(
        request(),
        BuiltinJudge(),
        stage2_price=Settings().price_of("claude-sonnet-4-5"),
        wall_judge=model_wall_judge(judge),
    )
    codes = [issue.code for issue in report_result.stage1.wall.issues]
    assert codes == ["JudgeIndeterminate"]
    assert report_result.quality.substance.status is ScoreStatus.SCORED
    assert [t.tier for t in judge.tasks] == [JudgeTier.WALL]


def test_a_floor_failure_never_asks_the_wall_judge() -> None:
    verdict = JudgeVerdict(
        model="m",
        scores={d: DimensionVerdict(score=0.5, justification="x") for d in WALL_DIMENSIONS},
    )
    judge = ScriptedJudge([verdict])
    broken = request(output={"kind": "python", "content": "def f(:\n"})
    result = review(
        broken,
        BuiltinJudge(),
        stage2_price=Settings().price_of("claude-sonnet-4-5"),
        wall_judge=model_wall_judge(judge),
    )
    assert judge.tasks == []
    assert result.stage1.floor.passed is False
    assert result.quality.get(Dimension.SUBSTANCE).status is ScoreStatus.UNSCORED


def test_the_builtin_judge_needs_no_separate_wall_call() -> None:
    assert stage1_judge(BuiltinJudge()) is None
