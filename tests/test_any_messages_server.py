"""The judge on any Messages API server: tool use forced, offered or absent, JSON in text,
one repair turn, a typed indeterminate when nothing validates; the hosted path unchanged.

Every test drives the real ``anthropic`` SDK over HTTP against the local double.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import redis
from opentelemetry.sdk.metrics.export import InMemoryMetricReader, NumberDataPoint
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic import SecretStr

from schemas.judging import JudgeTask, JudgeTier, ReplyForm
from schemas.quality import CEILING_DIMENSIONS, WALL_DIMENSIONS, Dimension, ScoreStatus
from schemas.request import NodeOutput, OutputKind, ReviewRequest
from schemas.result import CeilingStatus, Decision
from workers.endpoint import ToolUse
from workers.errors import ConfigurationError, JudgeOutputError
from workers.evaluate import run_ceiling, run_stage1
from workers.fleet.deps import guarded_judge
from workers.intake import request_from_obj
from workers.judges import prompt
from workers.judges.anthropic_judge import AnthropicJudge
from workers.judges.cache import CachedJudge
from workers.judges.ceiling import model_ceiling_judge
from workers.judges.retry import RetryPolicy
from workers.judges.wall import stage1_judge
from workers.observe.traced_judge import TracedJudge
from workers.review import review
from workers.settings import Settings, load_settings
from workers.testing.messages_api.server import Reply, ServerHandle

FAST = RetryPolicy(max_attempts=2, budget_s=5, base_delay_s=0.01, max_delay_s=0.02)
DIMS = (Dimension.CORRECTNESS, Dimension.CLARITY)
GOOD = {"correctness": 0.7, "clarity": 0.6}
MARKDOWN = (
    "# Release 2.4\n\n## Changes\n\n- The export job streams rows instead of loading them.\n"
    "- Webhook retries back off exponentially, capped at 60 seconds.\n\n## Upgrade notes\n\n"
    "Run the migration before deploying the workers.\n"
)


def settings_for(server: ServerHandle, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "anthropic_api_key": SecretStr(server.api_key),
        "anthropic_base_url": server.base_url,
        "judge_timeout_s": 2.0,
    }
    values.update(overrides)
    return Settings(**values)


def local_settings(server: ServerHandle, tool_use: ToolUse, **overrides: Any) -> Settings:
    """An endpoint of one's own: its model names, free, and its tool use."""
    return settings_for(
        server,
        stage1_model="smol-wall",
        stage2_model="smol-ceiling",
        endpoint_input_price_per_mtok=0.0,
        endpoint_output_price_per_mtok=0.0,
        judge_tool_use=tool_use,
        **overrides,
    )


def task_of(tier: JudgeTier = JudgeTier.CEILING, other: str | None = None) -> JudgeTask:
    return JudgeTask(
        tier=tier,
        dimensions=DIMS,
        output=NodeOutput(kind=OutputKind.PYTHON, content="def add(a, b):\n    return a + b\n"),
        task="write an add function",
        other=None if other is None else NodeOutput(kind=OutputKind.PYTHON, content=other),
    )


def body_of(server: ServerHandle, index: int = -1) -> dict[str, Any]:
    body = server.requests[index].body
    assert body is not None
    return body


def last_user_text(body: dict[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return "\n".join(b["text"] for b in content if b.get("type") == "text")


def request(**changes: Any) -> ReviewRequest:
    body: dict[str, Any] = {
        "dag_id": "d",
        "node_id": "notes",
        "skill": {"id": "docs", "success_rate": 0.95},
        "output": {"kind": "markdown", "content": MARKDOWN},
        "task": "Write the release notes with changes and upgrade notes",
        "flags": {"final_deliverable": True},
    }
    body.update(changes)
    return request_from_obj(body, max_request_bytes=100_000, max_output_chars=50_000)


# --- a server replying without tool calls ----------------------------------------------------


def test_a_forced_tool_call_answered_in_text_is_read_from_the_text(server: ServerHandle) -> None:
    server.script(Reply.json_text(GOOD, "adds ints", preamble="My review:\n", fenced=True))
    with AnthropicJudge(settings_for(server), FAST) as judge:
        verdict = judge.evaluate(task_of())
    assert server.calls == 1 and verdict.calls == 1
    assert verdict.scores[Dimension.CORRECTNESS].score == 0.7
    assert verdict.scores[Dimension.CLARITY].justification == "adds ints"
    assert verdict.parse is not None
    assert (verdict.parse.form, verdict.parse.repaired) == (ReplyForm.TEXT, False)


@pytest.mark.parametrize("tier", list(JudgeTier))
def test_a_server_without_tool_use_serves_every_tier(
    toolless: ServerHandle, tier: JudgeTier
) -> None:
    other = "def add(a, b): return b + a" if tier is JudgeTier.PAIRWISE else None
    with AnthropicJudge(local_settings(toolless, ToolUse.FORCED), FAST) as judge:
        verdict = judge.evaluate(task_of(tier, other))
    assert set(verdict.scores) == set(DIMS) and verdict.calls == 1
    assert verdict.parse is not None and verdict.parse.form is ReplyForm.TEXT
    expected = "smol-wall" if tier is JudgeTier.WALL else "smol-ceiling"
    assert verdict.model == body_of(toolless)["model"] == expected
    assert verdict.cost_usd == 0.0 and verdict.usage.input_tokens > 0


def test_tool_use_none_sends_no_tools_and_asks_for_the_json_object(toolless: ServerHandle) -> None:
    with AnthropicJudge(local_settings(toolless, ToolUse.NONE), FAST) as judge:
        verdict = judge.evaluate(task_of())
    body = body_of(toolless)
    assert "tools" not in body and "tool_choice" not in body
    assert body["system"] == [
        {"type": "text", "text": prompt.RUBRIC_JSON, "cache_control": {"type": "ephemeral"}}
    ]
    assert "answer only by calling the tool" not in prompt.RUBRIC_JSON
    ask = last_user_text(body).rsplit("\n\n", 1)[1]
    assert 'exactly the keys "correctness", "clarity"' in ask
    assert "Write nothing before or after the JSON object." in ask
    assert verdict.parse is not None and verdict.parse.form is ReplyForm.TEXT


def test_tool_use_offered_sends_the_tool_unforced_and_allows_text(server: ServerHandle) -> None:
    server.script(Reply.ok(GOOD))
    with AnthropicJudge(local_settings(server, ToolUse.OFFERED), FAST) as judge:
        verdict = judge.evaluate(task_of())
    body = body_of(server)
    assert body["tool_choice"] == {"type": "auto"}
    assert body["tools"][0]["name"] == prompt.TOOL_NAME
    assert "If you cannot call tools, reply with only its input" in last_user_text(body)
    assert verdict.parse is not None and verdict.parse.form is ReplyForm.TOOL


# --- invalid, then valid after the repair turn -------------------------------------------------


@pytest.mark.parametrize(
    ("bad", "quoted"),
    [
        (
            '{"correctness": {"score": 0.7, "justification": "ok"}, "clarity": {"sco',
            "does not parse",
        ),
        ('{"verdict": "fine"}', "must have exactly the keys ['correctness', 'clarity']"),
        (
            json.dumps({"correctness": {"score": 1.7}, "clarity": {"score": 0.5}}),
            "less than or equal to 1",
        ),
    ],
    ids=["truncated", "wrong-keys", "out-of-range"],
)
@pytest.mark.parametrize("tool_use", [ToolUse.NONE, ToolUse.FORCED])
def test_invalid_json_then_valid_after_one_repair_turn(
    toolless: ServerHandle, tool_use: ToolUse, bad: str, quoted: str
) -> None:
    toolless.script(Reply.text_reply(bad), Reply.json_text(GOOD, "repaired"))
    with AnthropicJudge(local_settings(toolless, tool_use), FAST) as judge:
        verdict = judge.evaluate(task_of())
    assert toolless.calls == 2 and verdict.calls == 2
    repair = body_of(toolless, 1)["messages"]
    assert [m["role"] for m in repair] == ["user", "assistant", "user"]
    assert repair[1]["content"] == [{"type": "text", "text": bad}]
    note = last_user_text(body_of(toolless, 1))
    assert "Your answer was rejected" in note and quoted in note
    again = {
        ToolUse.NONE: "Reply again with only the JSON object",
        ToolUse.FORCED: f"Call {prompt.TOOL_NAME} again",
    }[tool_use]
    assert again in note
    assert verdict.parse is not None
    assert (verdict.parse.form, verdict.parse.repaired) == (ReplyForm.TEXT, True)
    assert verdict.parse.first_error is not None and quoted in verdict.parse.first_error
    assert verdict.scores[Dimension.CLARITY].justification == "repaired"
    served = [r.usage for r in toolless.requests]
    assert verdict.usage.input_tokens == sum(u["input_tokens"] for u in served if u)


# --- nothing usable: a typed indeterminate, never FAIL 0 ---------------------------------------


def test_nothing_usable_twice_is_a_judge_output_error(toolless: ServerHandle) -> None:
    toolless.script(Reply.text_reply("I think it is fine."), Reply.text_reply('{"ok": true}'))
    with (
        AnthropicJudge(local_settings(toolless, ToolUse.NONE), FAST) as judge,
        pytest.raises(JudgeOutputError, match="no valid verdict after a corrective retry"),
    ):
        judge.evaluate(task_of())
    assert toolless.calls == 2


def test_nothing_usable_leaves_the_ceiling_indeterminate_not_zero(toolless: ServerHandle) -> None:
    toolless.script(*[Reply.text_reply("No comment.")] * 2)
    review_request = request()
    report = run_stage1(review_request)
    with AnthropicJudge(local_settings(toolless, ToolUse.NONE), FAST) as judge:
        stage2 = run_ceiling(review_request, report, model_ceiling_judge(judge))
    assert stage2.stage2.status is CeilingStatus.INDETERMINATE
    assert stage2.stage2.error is not None
    assert stage2.stage2.error.startswith("JudgeOutputError: smol-ceiling: no valid verdict")
    for dimension in CEILING_DIMENSIONS:
        score = getattr(stage2.quality, dimension.value)
        assert score.status is ScoreStatus.INDETERMINATE and score.value is None


def test_replies_that_never_validated_are_charged(toolless: ServerHandle) -> None:
    """An unusable verdict was still answered: its tokens and price are in the books."""
    toolless.script(*[Reply.text_reply("No comment.")] * 2)
    review_request = request()
    priced = settings_for(
        toolless,
        stage1_model="smol-wall",
        stage2_model="smol-ceiling",
        endpoint_input_price_per_mtok=3.0,
        endpoint_output_price_per_mtok=15.0,
        judge_tool_use=ToolUse.NONE,
    )
    with AnthropicJudge(priced, FAST) as judge:
        stage2 = run_ceiling(review_request, run_stage1(review_request), model_ceiling_judge(judge))
    assert stage2.stage2.status is CeilingStatus.INDETERMINATE and stage2.stage2.calls == 2
    assert stage2.usage.input_tokens > 0 and stage2.usage.output_tokens > 0
    assert stage2.cost_usd > 0
    assert stage2.cost_usd == pytest.approx(priced.price_of("smol-ceiling").cost(stage2.usage))


# --- the same review through the hosted path and through text ----------------------------------


def _same_scores(server: ServerHandle) -> None:
    server.script(
        Reply.ok({d.value: 0.9 for d in WALL_DIMENSIONS}, justification="wall evidence"),
        Reply.ok({"correctness": 0.9, "completeness": 0.85, "clarity": 0.9, "relevance": 0.88}),
    )


def test_the_same_review_through_the_hosted_path_and_a_text_only_server(
    server: ServerHandle, toolless: ServerHandle
) -> None:
    results = []
    for handle, settings in (
        (server, settings_for(server)),
        (toolless, local_settings(toolless, ToolUse.NONE)),
    ):
        _same_scores(handle)
        with AnthropicJudge(settings, FAST) as judge:
            results.append(
                review(
                    request(),
                    judge,
                    stage2_price=settings.price_of(settings.stage2_model),
                    wall_judge=stage1_judge(judge),
                )
            )
    hosted, text = results
    # The hosted path asks as it always did: the forced tool, the tool-calling rubric.
    for exchange in server.requests:
        body = exchange.body
        assert body is not None
        assert body["tool_choice"] == {"type": "tool", "name": prompt.TOOL_NAME}
        assert body["system"][0]["text"] == prompt.RUBRIC
        assert last_user_text(body).endswith(
            f"Call {prompt.TOOL_NAME} with a score and justification for each dimension."
        )
    assert [r.body["model"] for r in server.requests if r.body] == [
        "claude-haiku-4-5",
        "claude-sonnet-4-5",
    ]
    assert hosted.decision is text.decision is Decision.ACCEPT
    assert hosted.quality == text.quality
    assert hosted.stage1 == text.stage1 and hosted.confidence == text.confidence
    assert hosted.stage2 is not None and text.stage2 is not None
    assert (hosted.stage2.model, text.stage2.model) == ("claude-sonnet-4-5", "smol-ceiling")
    assert hosted.envelope.review_cost_usd > 0 and text.envelope.review_cost_usd == 0


def test_position_swap_runs_both_orders_on_a_text_only_server(toolless: ServerHandle) -> None:
    settings = local_settings(toolless, ToolUse.NONE)
    baseline = {"kind": "markdown", "content": MARKDOWN.replace("60 seconds", "30 seconds")}
    with AnthropicJudge(settings, FAST) as judge:
        result = review(request(baseline=baseline), judge, stage2_price=settings.price_of("x"))
    assert result.stage2 is not None and result.stage2.bias is not None
    pairwise = [
        last_user_text(r.body) for r in toolless.requests if r.body and "Output A:" in str(r.body)
    ]
    assert len(pairwise) in (2, 4) and result.stage2.calls == 1 + len(pairwise)
    first, second = pairwise[:2]
    assert first.index("60 seconds") < first.index("30 seconds")
    assert second.index("30 seconds") < second.index("60 seconds")


# --- settings, price, cache namespace ----------------------------------------------------------


def test_endpoint_settings_are_read_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in {
        "WINDAGS_ANTHROPIC_BASE_URL": "http://127.0.0.1:8080",
        "WINDAGS_STAGE1_MODEL": "qwen-small",
        "WINDAGS_STAGE2_MODEL": "qwen-big",
        "WINDAGS_JUDGE_TOOL_USE": "offered",
        "WINDAGS_ENDPOINT_INPUT_PRICE_PER_MTOK": "0",
        "WINDAGS_ENDPOINT_OUTPUT_PRICE_PER_MTOK": "0.5",
    }.items():
        monkeypatch.setenv(name, value)
    settings = load_settings()
    assert settings.judge_tool_use is ToolUse.OFFERED
    assert settings.anthropic_base_url == "http://127.0.0.1:8080"
    price = settings.price_of("qwen-big")
    assert (price.input_per_mtok, price.output_per_mtok, price.cache_read_per_mtok) == (0, 0.5, 0)
    assert settings.price_of("claude-sonnet-4-5").input_per_mtok == 3.0  # the table still wins
    monkeypatch.setenv("WINDAGS_JUDGE_TOOL_USE", "sometimes")
    with pytest.raises(ConfigurationError, match=r"^WINDAGS_JUDGE_TOOL_USE: "):
        load_settings()


def test_an_unpriced_model_or_half_a_price_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="ENDPOINT_INPUT_PRICE_PER_MTOK"):
        AnthropicJudge(Settings(anthropic_api_key=SecretStr("k"), stage2_model="qwen-big"))
    with pytest.raises(ConfigurationError, match="go together"):
        Settings(endpoint_input_price_per_mtok=0.0)
    with pytest.raises(ValueError, match="greater than or equal to 0"):
        Settings(endpoint_input_price_per_mtok=-1.0, endpoint_output_price_per_mtok=0.0)


def test_the_cache_keeps_hosted_keys_and_separates_other_endpoints() -> None:
    client = redis.Redis(host="127.0.0.1", port=1)  # never connected: keys only
    task = task_of()

    def key(settings: Settings) -> str:
        guarded = guarded_judge(AnthropicJudge(settings, FAST), client, settings)
        assert isinstance(guarded, CachedJudge)
        return guarded.key(task)

    hosted = Settings(anthropic_api_key=SecretStr("k"))
    namespace = f"{prompt.RUBRIC_VERSION}|claude-haiku-4-5|claude-sonnet-4-5|0.0"
    before = CachedJudge(
        AnthropicJudge(hosted, FAST), client, hosted.keys, namespace=namespace, ttl_s=60
    )
    assert key(hosted) == before.key(task)
    elsewhere = hosted.model_copy(update={"anthropic_base_url": "http://127.0.0.1:8080"})
    untooled = elsewhere.model_copy(update={"judge_tool_use": ToolUse.NONE})
    assert len({key(hosted), key(elsewhere), key(untooled)}) == 3


# --- parse and repair on the judge's span ------------------------------------------------------


def test_parse_and_repair_outcomes_are_on_the_judge_spans(
    toolless: ServerHandle, captured: tuple[InMemorySpanExporter, InMemoryMetricReader]
) -> None:
    spans, reader = captured
    toolless.script(
        Reply.json_text(GOOD),
        Reply.text_reply("{}"),
        Reply.json_text(GOOD),
        Reply.text_reply("no."),
        Reply.text_reply("still no."),
    )
    with AnthropicJudge(local_settings(toolless, ToolUse.NONE), FAST) as inner:
        judge = TracedJudge(inner)
        judge.evaluate(task_of())
        judge.evaluate(task_of())
        with pytest.raises(JudgeOutputError):
            judge.evaluate(task_of())
    first, repaired, unusable = (dict(s.attributes or {}) for s in spans.get_finished_spans())
    assert first["windags.judge.parse.form"] == "text"
    assert first["windags.judge.parse.repaired"] is False
    assert "windags.judge.parse.first_error" not in first
    assert repaired["windags.judge.parse.repaired"] is True
    assert "must have exactly the keys" in str(repaired["windags.judge.parse.first_error"])
    assert repaired["windags.judge.calls"] == 2
    assert isinstance(tokens := repaired["gen_ai.usage.input_tokens"], int) and tokens > 0
    assert unusable["windags.judge.parse.form"] == "unusable"
    assert unusable["windags.judge.calls"] == 2
    assert isinstance(spent := unusable["gen_ai.usage.input_tokens"], int) and spent > 0
    assert unusable["error.type"] == "JudgeOutputError"
    data = reader.get_metrics_data()
    assert data is not None
    counted: dict[tuple[str, bool], float] = {}
    for rm in data.resource_metrics:
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                for p in m.data.data_points if m.name == "windags.judge.parses" else ():
                    assert isinstance(p, NumberDataPoint) and p.attributes is not None
                    counted[str(p.attributes["form"]), bool(p.attributes["repaired"])] = p.value
    assert counted == {("text", False): 1, ("text", True): 1, ("unusable", True): 1}
