"""Stage 2 against a real Messages API server: llama.cpp's llama-server with SmolLM2-135M.

Wiring, not judgement: a 135M model is no judge. What must hold is that every escalated
review of the demo DAG ends with a verdict or a typed indeterminate (never a 0 for a
reply that could not be read), and that each judge span records how the reply was read,
its latency and its tokens. Skips unless ``pip install -e '.[local-model]'`` and
``make local-model`` have run (``make local-model-test`` runs it).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from importlib import resources
from statistics import fmean

import pytest
from opentelemetry.sdk.metrics.export import InMemoryMetricReader, NumberDataPoint
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic import SecretStr

from schemas.judging import JudgeTask, JudgeTier
from schemas.quality import CEILING_DIMENSIONS, ScoreStatus
from schemas.request import NodeOutput, OutputKind
from schemas.result import CeilingStatus
from workers.endpoint import JudgeBackend, ToolUse
from workers.errors import JudgeOutputError
from workers.intake import request_from_obj
from workers.judges.anthropic_judge import AnthropicJudge
from workers.judges.factory import build_judge
from workers.observe.traced_judge import TracedJudge
from workers.review import review
from workers.settings import Settings
from workers.testing.local_model import MODEL, local_model, missing, running_llama_server

ABSENT = missing()
pytestmark = [
    pytest.mark.skipif(ABSENT is not None, reason=f"local model not installed: {ABSENT}"),
    pytest.mark.timeout(1800),
]
TYPED = ("JudgeOutputError", "JudgeRetryableError", "JudgeTerminalError")


def settings_for(base_url: str, tool_use: ToolUse) -> Settings:
    """Stage 2 on the local server: its model on both tiers, free, one bounded try a call."""
    return Settings(
        judge_backend=JudgeBackend.ANTHROPIC,
        anthropic_api_key=SecretStr("unused-by-llama-server"),
        anthropic_base_url=base_url,
        stage1_model=MODEL,
        stage2_model=MODEL,
        endpoint_input_price_per_mtok=0.0,
        endpoint_output_price_per_mtok=0.0,
        judge_tool_use=tool_use,
        judge_max_tokens=320,
        judge_timeout_s=120.0,
        judge_max_attempts=1,
        stage1_soft_limit_s=200,
        stage1_hard_limit_s=250,
        stage2_soft_limit_s=700,
        stage2_hard_limit_s=750,
    )


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with running_llama_server(local_model()) as url:
        yield url


@pytest.mark.parametrize("tool_use", list(ToolUse))
def test_the_server_takes_each_way_of_asking(base_url: str, tool_use: ToolUse) -> None:
    task = JudgeTask(
        tier=JudgeTier.CEILING,
        dimensions=CEILING_DIMENSIONS,
        output=NodeOutput(kind=OutputKind.PYTHON, content="def add(a, b):\n    return a + b\n"),
        task="write an add function",
    )
    with AnthropicJudge(settings_for(base_url, tool_use)) as judge:
        try:
            verdict = judge.evaluate(task)
        except JudgeOutputError as exc:  # the model rambled: typed, with what it spent
            assert exc.calls == 2 and exc.input_tokens > 0
        else:
            assert verdict.parse is not None and set(verdict.scores) == set(CEILING_DIMENSIONS)


def test_the_demo_dag_through_stage2_on_a_real_server(
    base_url: str, captured: tuple[InMemorySpanExporter, InMemoryMetricReader]
) -> None:
    spans, reader = captured
    settings = settings_for(base_url, ToolUse.NONE)
    dag = resources.files("workers.samples").joinpath("dag/migration_dag.json").read_text()
    requests = [
        request_from_obj(body, max_request_bytes=1_000_000, max_output_chars=200_000)
        for body in json.loads(dag)
    ]
    judge = build_judge(settings)
    assert isinstance(judge, AnthropicJudge)
    try:
        traced = TracedJudge(judge)
        price = settings.price_of(settings.stage2_model)
        results = [review(r, traced, stage2_price=price) for r in requests]
    finally:
        judge.close()

    escalated = [r for r in results if r.escalation.escalate]
    assert escalated, "the demo DAG escalates its final deliverable at least"
    for result in escalated:
        stage2 = result.stage2
        assert stage2 is not None, result.node_id
        if stage2.status is CeilingStatus.INDETERMINATE:
            assert stage2.error is not None and stage2.error.startswith(TYPED), stage2.error
            for dimension in CEILING_DIMENSIONS:
                score = getattr(result.quality, dimension.value)
                assert score.status is ScoreStatus.INDETERMINATE and score.value is None
        else:
            assert stage2.status is CeilingStatus.SCORED and stage2.model == MODEL

    judged = [s for s in spans.get_finished_spans() if s.name.startswith("windags.judge ")]
    assert len(judged) == len(escalated)  # one Ceiling call each: the demo has no baselines
    forms: Counter[str] = Counter()
    latencies, tokens = [], 0
    for span in judged:
        attributes = dict(span.attributes or {})
        assert span.end_time is not None and span.start_time is not None
        latencies.append((span.end_time - span.start_time) / 1e9)
        form = attributes.get("windags.judge.parse.form")
        if form is None:  # no reply at all (a timeout): typed, counted by its class
            assert str(attributes["error.type"]) in TYPED
            continue
        forms[f"{form}{'+repair' if attributes['windags.judge.parse.repaired'] else ''}"] += 1
        spent = attributes["gen_ai.usage.input_tokens"]
        assert isinstance(spent, int) and spent > 0
        tokens += spent
    data = reader.get_metrics_data()
    assert data is not None
    counted = sum(
        p.value
        for rm in data.resource_metrics
        for sm in rm.scope_metrics
        for m in sm.metrics
        if m.name == "windags.judge.parses"
        for p in m.data.data_points
        if isinstance(p, NumberDataPoint)
    )
    assert counted == sum(forms.values())
    print(
        f"\n{len(escalated)}/{len(results)} escalated; replies read: {dict(forms)}; "
        f"mean latency {fmean(latencies):.1f}s, max {max(latencies):.1f}s; input tokens {tokens}"
    )
