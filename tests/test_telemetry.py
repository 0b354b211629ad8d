"""Telemetry helpers with in-memory exporters: no Celery, no Redis, no network."""

from __future__ import annotations

import logging
import re
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from schemas.judging import JudgeVerdict
from schemas.request import ReviewRequest
from tests.verdicts import paid_verdict
from workers.errors import JudgeRetryableError
from workers.evaluate import decide_escalation, finalize, run_ceiling, run_stage1
from workers.intake import decode_request
from workers.judges.ceiling import model_ceiling_judge
from workers.observe import spans, telemetry, tracecontext
from workers.observe.metrics import CASCADE_WINDOW, EscalationMonitor
from workers.observe.traced_judge import TracedJudge
from workers.settings import Settings
from workers.testing.scripted_judge import ScriptedJudge

SAMPLES = Path(__file__).resolve().parent.parent / "workers" / "samples"
SETTINGS = Settings(redis_url="redis://127.0.0.1:1/0")


@dataclass
class Captured:
    spans: InMemorySpanExporter
    reader: InMemoryMetricReader

    def finished(self) -> dict[str, ReadableSpan]:
        return {s.name: s for s in self.spans.get_finished_spans()}

    def points(self, metric: str) -> list[Any]:
        data = self.reader.get_metrics_data()
        assert data is not None
        return [
            point
            for rm in data.resource_metrics
            for sm in rm.scope_metrics
            for m in sm.metrics
            if m.name == metric
            for point in m.data.data_points
        ]


@pytest.fixture
def captured() -> Iterator[Captured]:
    spans, reader = InMemorySpanExporter(), InMemoryMetricReader()
    state = telemetry.setup(
        SETTINGS,
        span_exporter=spans,
        metric_reader=reader,
        install_global=False,
        instrument_celery=False,
        queue_depths=lambda: {"stage1": 3, "stage2": 0},
    )
    assert state.active
    yield Captured(spans, reader)
    telemetry.shutdown()
    assert not telemetry.current().active


def _request(name: str = "final_deliverable.json") -> ReviewRequest:
    return decode_request(
        (SAMPLES / name).read_bytes(), max_request_bytes=1_000_000, max_output_chars=200_000
    )


def _verdict() -> JudgeVerdict:
    return paid_verdict(0.9, model="claude-sonnet-4-5", tokens=(1200, 300), cost_usd=0.0081)


def test_disabled_telemetry_installs_nothing_and_every_helper_still_works() -> None:
    state = telemetry.setup(SETTINGS)
    assert not state.active
    assert isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
    request = _request()
    report = run_stage1(request)
    with spans.stage_span("stage1") as opened:
        assert not opened.is_recording()
        spans.note_stage1(request, report)
        assert tracecontext.traceparent() is None
    judge = ScriptedJudge([_verdict()])
    assert (
        run_ceiling(request, report, model_ceiling_judge(judge)).stage2.model == "claude-sonnet-4-5"
    )
    telemetry.shutdown()  # nothing to shut down: harmless


def test_stage_span_carries_the_floor_and_wall_outcome_and_times_the_stage(
    captured: Captured,
) -> None:
    request = _request("floor_failure_python.json")
    with spans.stage_span("stage1") as opened:
        spans.note_stage1(request, run_stage1(request))
        spans.set_outcome(opened, "hop:windags.review.router")
    span = captured.finished()["windags.stage1"]
    attrs = dict(span.attributes or {})
    assert attrs["windags.dag_id"] == request.dag_id
    assert attrs["windags.node_id"] == request.node_id
    assert attrs["windags.attempt"] == 1
    assert attrs["windags.floor.passed"] is False
    assert "SyntaxError" in attrs["windags.floor.violations"]  # type: ignore[operator]
    assert attrs["windags.wall.resolution"] == "not_run"
    assert attrs["windags.outcome"] == "hop:windags.review.router"
    (duration,) = captured.points("windags.stage.duration")
    assert duration.count == 1
    assert dict(duration.attributes) == {"stage": "stage1", "outcome": "ok"}


def test_a_failing_stage_is_timed_as_an_error_and_its_span_records_it(captured: Captured) -> None:
    with pytest.raises(RuntimeError), spans.stage_span("router"):
        raise RuntimeError("redis went away")
    span = captured.finished()["windags.router"]
    assert span.status.status_code is trace.StatusCode.ERROR
    (duration,) = captured.points("windags.stage.duration")
    assert dict(duration.attributes)["outcome"] == "error"


def test_the_escalation_decision_and_its_breakdown_are_on_the_span_and_counted(
    captured: Captured,
) -> None:
    request = _request()
    report = run_stage1(request)
    escalation = decide_escalation(
        request, stage2_price=SETTINGS.price_of(SETTINGS.stage2_model), stage1=report.stage1
    )
    with spans.stage_span("router"):
        spans.note_escalation(request, escalation)
    attrs = dict(captured.finished()["windags.router"].attributes or {})
    assert attrs["windags.escalation.escalate"] is True
    assert attrs["windags.escalation.reason"] == "final_deliverable"
    for key in ("failure_probability", "downstream_waste", "expected_waste", "stage2_cost"):
        assert attrs[f"windags.escalation.{key}"] == getattr(escalation, key)
    (point,) = captured.points("windags.escalation.decisions")
    assert point.value == 1
    assert dict(point.attributes) == {"escalated": True, "reason": "final_deliverable"}


def test_each_judge_call_gets_a_span_with_model_tokens_and_cost(captured: Captured) -> None:
    request = _request()
    report = run_stage1(request)
    with spans.stage_span("stage2"):
        stage2 = run_ceiling(
            request, report, model_ceiling_judge(TracedJudge(ScriptedJudge([_verdict()])))
        )
        spans.note_stage2(request, stage2)
    finished = captured.finished()
    judge, stage = finished["windags.judge ceiling"], finished["windags.stage2"]
    assert judge.parent is not None and judge.parent.span_id == stage.context.span_id
    attrs = dict(judge.attributes or {})
    assert attrs["gen_ai.response.model"] == "claude-sonnet-4-5"
    assert attrs["gen_ai.usage.input_tokens"] == 1200
    assert attrs["gen_ai.usage.output_tokens"] == 300
    assert attrs["windags.judge.cost_usd"] == pytest.approx(0.0081)
    assert dict(stage.attributes or {})["windags.ceiling.status"] == "scored"
    (calls,) = captured.points("windags.judge.calls")
    assert dict(calls.attributes)["outcome"] == "ok"
    tokens = {dict(p.attributes)["type"]: p.value for p in captured.points("windags.judge.tokens")}
    assert tokens == {"input": 1200, "output": 300}


def test_a_judge_error_is_counted_by_class_and_marks_its_span(captured: Captured) -> None:
    request = _request()
    report = run_stage1(request)
    failing = TracedJudge(ScriptedJudge([JudgeRetryableError("overloaded")]))
    stage2 = run_ceiling(request, report, model_ceiling_judge(failing))
    assert stage2.stage2.status.value == "indeterminate"
    span = captured.finished()["windags.judge ceiling"]
    assert span.status.status_code is trace.StatusCode.ERROR
    assert dict(span.attributes or {})["error.type"] == "JudgeRetryableError"
    (error,) = captured.points("windags.judge.errors")
    assert dict(error.attributes)["error_class"] == "JudgeRetryableError"


def test_publishing_counts_the_review_by_decision_and_its_cost_by_dag_once(
    captured: Captured,
) -> None:
    request = _request("good_python.json")
    report = run_stage1(request)
    escalation = decide_escalation(
        request, stage2_price=SETTINGS.price_of(SETTINGS.stage2_model), stage1=report.stage1
    )
    result = finalize(request, report, escalation, None)
    with spans.stage_span("router"):
        spans.note_published(result, added=True, entry_id="1-0")
        spans.note_published(result, added=False, entry_id="1-0")  # a redelivery
    (reviews,) = captured.points("windags.reviews")
    assert reviews.value == 1
    assert dict(reviews.attributes)["decision"] == result.decision.value
    (cost,) = captured.points("windags.review.cost")
    assert dict(cost.attributes) == {"dag_id": request.dag_id}
    attrs = dict(captured.finished()["windags.router"].attributes or {})
    assert attrs["windags.decision"] == result.decision.value
    assert attrs["windags.near_misses.count"] == len(result.near_misses)


def test_traceparent_names_the_current_span_and_a_subscriber_can_continue_it(
    captured: Captured,
) -> None:
    with spans.span("windags.stage2") as opened:
        value = tracecontext.traceparent()
    assert value is not None
    context = opened.get_span_context()
    assert tracecontext.trace_id_of(value) == f"{context.trace_id:032x}"
    tracer = telemetry.current().tracer
    with tracer.start_as_current_span("dag-node.handle", context=tracecontext.context_of(value)):
        pass
    child = captured.finished()["dag-node.handle"]
    assert child.context.trace_id == context.trace_id
    assert child.parent is not None and child.parent.span_id == context.span_id


@pytest.mark.parametrize(
    "value",
    [None, "", "garbage", "00-" + "0" * 32 + "-" + "1" * 16 + "-01", "00-abc-def-01"],
)
def test_trace_id_of_refuses_what_is_not_a_valid_traceparent(value: str | None) -> None:
    assert tracecontext.trace_id_of(value) is None


def test_queue_depth_and_cascade_gauges_are_observed(captured: Captured) -> None:
    depths = {dict(p.attributes)["queue"]: p.value for p in captured.points("windags.queue.depth")}
    assert depths == {"stage1": 3, "stage2": 0}
    # The monitor lives as long as the process (earlier tests fed it): fill its window.
    monitor = telemetry.current().instruments.monitor
    for escalated, expected in ((False, 0), (True, 1), (False, 0)):
        for _ in range(CASCADE_WINDOW):
            monitor.observe(escalated=escalated)
        (flag,) = captured.points("windags.escalation.cascade")
        assert flag.value == expected
        (rate,) = captured.points("windags.escalation.rolling_rate")
        assert rate.value == expected


def test_a_rolling_escalation_rate_above_60_percent_warns_once_and_raises_the_flag(
    caplog: pytest.LogCaptureFixture,
) -> None:
    monitor = EscalationMonitor(window=20, min_samples=10)
    with caplog.at_level(logging.WARNING, logger="windags.metrics"):
        tipped = [monitor.observe(escalated=i % 4 != 0) for i in range(20)]  # 75% escalated
    assert tipped.count(True) == 1
    assert monitor.cascading and monitor.rate == pytest.approx(0.75)
    assert len([r for r in caplog.records if "escalation cascade" in r.message]) == 1
    for _ in range(20):
        monitor.observe(escalated=False)
    assert not monitor.cascading


def test_few_decisions_never_count_as_a_cascade() -> None:
    monitor = EscalationMonitor(min_samples=10)
    assert not any(monitor.observe(escalated=True) for _ in range(9))
    assert not monitor.cascading


def test_a_prometheus_port_alone_serves_the_metrics_and_records_no_spans() -> None:
    settings = SETTINGS.model_copy(update={"prometheus_port": 0})
    state = telemetry.setup(settings, install_global=False, instrument_celery=False)
    try:
        assert state.active and state.metrics_endpoint is not None
        port = state.metrics_endpoint.port
        assert port is not None
        request = _request("good_python.json")
        report = run_stage1(request)
        escalation = decide_escalation(
            request, stage2_price=SETTINGS.price_of(SETTINGS.stage2_model), stage1=report.stage1
        )
        result = finalize(request, report, escalation, None)
        with spans.stage_span("router") as opened:
            assert not opened.is_recording()  # metrics only: spans cost nothing
            spans.note_escalation(request, escalation)
            spans.note_published(result, added=True, entry_id="1-0")

        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
            assert reply.status == 200
            text = reply.read().decode()
    finally:
        telemetry.shutdown()

    decision = result.decision.value
    assert re.search(rf'^windags_reviews_total\{{.*decision="{decision}".*\}} 1\.0$', text, re.M)
    assert re.search(
        r'^windags_escalation_decisions_total\{.*escalated="false".*\} 1\.0$', text, re.M
    )
    assert re.search(
        r'^windags_stage_duration_seconds_count\{.*stage="router".*\} 1\.0$', text, re.M
    )
    with pytest.raises(OSError):  # shut down with its providers
        urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2)


def test_the_submitting_client_never_takes_the_prometheus_port() -> None:
    settings = SETTINGS.model_copy(update={"prometheus_port": 0})
    state = telemetry.setup(settings, install_global=False, serve_metrics=False)
    assert not state.active
