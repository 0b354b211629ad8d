"""Traces and metrics across the real fleet: real Redis, real worker processes.

The workers export OTLP/HTTP to a tiny receiver running in this test process, exactly as
they would to a collector; this process traces its own submissions into memory. A fleet of
its own (Redis db 11, its own key prefix) keeps test_fleet.py's fleet undisturbed.
"""

from __future__ import annotations

import gzip
import os
import re
import threading
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
import redis
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from schemas.result import ReviewResult
from tests.infrastructure import SHORT_LIMITS, shared_database, wait_until
from tests.integration.support import fresh_dag, sample
from workers.client import ReviewClient
from workers.fleet.queues import Queue
from workers.local.launcher import DEFAULT_CONCURRENCY, LocalFleet
from workers.local.redis_server import free_port
from workers.observe import telemetry
from workers.results.stream import StreamEntry, read_all
from workers.settings import Settings

pytestmark = pytest.mark.integration

TRACING_REDIS_URL = os.environ.get("WINDAGS_TEST_TRACING_REDIS_URL", "redis://127.0.0.1:6379/11")
STAGES = ("stage1", "router", "stage2")
_KIND_PRODUCER, _KIND_CONSUMER = 4, 5  # opentelemetry.proto.trace.v1.Span.SpanKind

#: This module's own database (no other fleet's results) and a client of it.
tracing_redis_url, tracing_db = shared_database(TRACING_REDIS_URL)


@dataclass(frozen=True)
class RemoteSpan:
    """A span a worker exported, decoded from OTLP protobuf."""

    name: str
    trace_id: str
    span_id: str
    parent_id: str
    kind: int
    attributes: dict[str, Any]


def _value(value: AnyValue) -> Any:
    which = value.WhichOneof("value")
    if which == "array_value":
        return [_value(v) for v in value.array_value.values]
    return getattr(value, which) if which else None


class Receiver:
    """An OTLP/HTTP endpoint (``POST /v1/traces``, ``/v1/metrics``) that keeps what it gets."""

    def __init__(self) -> None:
        self.spans: list[RemoteSpan] = []
        self.metrics: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                if self.path == "/v1/traces":
                    receiver._traces(body)
                    reply = ExportTraceServiceResponse().SerializeToString()
                elif self.path == "/v1/metrics":
                    receiver._metrics(body)
                    reply = ExportMetricsServiceResponse().SerializeToString()
                else:
                    self.send_response(404)
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *_: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def _traces(self, body: bytes) -> None:
        request = ExportTraceServiceRequest.FromString(body)
        decoded = [
            RemoteSpan(
                name=s.name,
                trace_id=s.trace_id.hex(),
                span_id=s.span_id.hex(),
                parent_id=s.parent_span_id.hex(),
                kind=s.kind,
                attributes={a.key: _value(a.value) for a in s.attributes},
            )
            for rs in request.resource_spans
            for ss in rs.scope_spans
            for s in ss.spans
        ]
        with self._lock:
            self.spans.extend(decoded)

    def _metrics(self, body: bytes) -> None:
        request = ExportMetricsServiceRequest.FromString(body)
        points = []
        for rm in request.resource_metrics:
            for sm in rm.scope_metrics:
                for metric in sm.metrics:
                    data = getattr(metric, metric.WhichOneof("data"))
                    for point in data.data_points:
                        attrs = {a.key: _value(a.value) for a in point.attributes}
                        points.append((metric.name, attrs))
        with self._lock:
            self.metrics.extend(points)

    def trace(self, trace_id: str) -> list[RemoteSpan]:
        with self._lock:
            return [s for s in self.spans if s.trace_id == trace_id]

    def points(self, name: str) -> list[dict[str, Any]]:
        with self._lock:
            return [attrs for metric, attrs in self.metrics if metric == name]


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    running = Receiver()
    running.thread.start()
    yield running
    running.server.shutdown()
    running.server.server_close()


@pytest.fixture(scope="module")
def tracing_env(receiver: Receiver) -> dict[str, str]:
    return {
        "WINDAGS_KEY_PREFIX": f"it-trace-{uuid.uuid4().hex[:8]}",
        "WINDAGS_JUDGE_BACKEND": "builtin",
        "WINDAGS_OTEL_ENABLED": "true",
        "WINDAGS_OTEL_ENDPOINT": receiver.endpoint,
        "WINDAGS_OTEL_SERVICE_NAME": "windags-it",
        "OTEL_BSP_SCHEDULE_DELAY": "100",
        "OTEL_METRIC_EXPORT_INTERVAL": "500",
        **SHORT_LIMITS,
    }


@pytest.fixture(scope="module")
def stage2_metrics_port() -> int:
    """The Stage 2 worker also serves Prometheus metrics, here."""
    return free_port()


@pytest.fixture(scope="module", params=["threads", "prefork", "gevent"])
def traced_fleet(
    request: pytest.FixtureRequest,
    tracing_redis_url: str,
    tracing_db: redis.Redis,
    tracing_env: dict[str, str],
    stage2_metrics_port: int,
) -> Iterator[LocalFleet]:
    """The Procfile's threads pool, prefork, whose children set telemetry up after fork,
    and gevent, where each review runs in a greenlet of one thread.

    Under prefork a provider made before the fork would lose its export thread in each
    child: the spans these tests look for would never arrive. Under gevent the trace
    context must stay with its greenlet: a batch's reviews run interleaved.
    """
    running = LocalFleet(
        tracing_redis_url,
        # One child per prefork worker: a second would find the metrics port taken.
        concurrency=dict.fromkeys(Queue, 1)
        if request.param == "prefork"
        else dict(DEFAULT_CONCURRENCY),
        extra_env=tracing_env,
        worker_env={Queue.STAGE2: {"WINDAGS_PROMETHEUS_PORT": str(stage2_metrics_port)}},
        start_private_redis=False,
        pool=request.param,
    )
    with running:
        running.wait_ready(timeout_s=90)
        yield running


@pytest.fixture(scope="module")
def client_settings(tracing_redis_url: str, tracing_env: dict[str, str]) -> Settings:
    """The submitter's settings: same prefix, telemetry set up by the test itself."""
    return Settings(
        redis_url=tracing_redis_url,
        key_prefix=tracing_env["WINDAGS_KEY_PREFIX"],
        judge_backend="builtin",
    )


@pytest.fixture(scope="module")
def local_spans(client_settings: Settings) -> Iterator[InMemorySpanExporter]:
    """This process is the DAG runtime: instrumented publisher, spans kept in memory."""
    exporter = InMemorySpanExporter()
    telemetry.setup(
        client_settings,
        span_exporter=exporter,
        metric_reader=InMemoryMetricReader(),
        install_global=False,
    )
    yield exporter
    telemetry.shutdown()


@dataclass(frozen=True)
class Runtime:
    """The DAG runtime of these tests: its client, and the streams its results land on."""

    client: ReviewClient
    db: redis.Redis
    settings: Settings

    def entries(self, dag: str, count: int) -> list[StreamEntry]:
        """The DAG's stream once it holds ``count`` entries (asserted within a minute)."""
        stream = self.settings.keys.results(dag)
        assert wait_until(lambda: self.db.xlen(stream) >= count, timeout_s=60)
        return read_all(self.db, stream)


@pytest.fixture
def runtime(
    traced_fleet: LocalFleet,
    local_spans: InMemorySpanExporter,
    tracing_db: redis.Redis,
    client_settings: Settings,
) -> Iterator[Runtime]:
    """A client of the traced fleet, instrumented by ``local_spans``."""
    client = ReviewClient(client_settings)
    yield Runtime(client, tracing_db, client_settings)
    client.close()


def _one(spans: list[RemoteSpan], name: str) -> RemoteSpan:
    found = [s for s in spans if s.name == name]
    assert len(found) == 1, f"{name}: {len(found)} spans in {sorted(s.name for s in spans)}"
    return found[0]


def _has(receiver: Receiver, trace_id: str, name: str) -> bool:
    return any(s.name == name for s in receiver.trace(trace_id))


def _local(exporter: InMemorySpanExporter, name: str, trace_id: int) -> ReadableSpan:
    (span,) = [
        s
        for s in exporter.get_finished_spans()
        if s.name == name and s.context.trace_id == trace_id
    ]
    return span


ESCALATED_CHAIN = (
    "run/windags.review.stage1",
    "windags.stage1",
    "apply_async/windags.review.router",
    "run/windags.review.router",
    "windags.router",
    "apply_async/windags.review.stage2",
    "run/windags.review.stage2",
    "windags.stage2",
    "windags.judge ceiling",
)


def test_one_escalated_review_is_one_trace_from_the_submitter_through_stage2(
    runtime: Runtime, receiver: Receiver, local_spans: InMemorySpanExporter
) -> None:
    dag = fresh_dag()
    tracer = telemetry.current().tracer
    with tracer.start_as_current_span("dag-node.submit") as root:
        runtime.client.submit(sample("final_deliverable.json", dag_id=dag))
    trace_int = root.get_span_context().trace_id
    trace_id = f"{trace_int:032x}"

    (entry,) = runtime.entries(dag, 1)
    assert isinstance(entry.payload, ReviewResult)
    assert entry.payload.trace_id == trace_id
    assert wait_until(
        lambda: {s.name for s in receiver.trace(trace_id)} >= set(ESCALATED_CHAIN), timeout_s=30
    ), sorted(s.name for s in receiver.trace(trace_id))
    remote = receiver.trace(trace_id)
    spans = {name: _one(remote, name) for name in ESCALATED_CHAIN}

    # The submitter's side: our root -> windags.submit -> the instrumentor's producer span.
    submit = _local(local_spans, "windags.submit", trace_int)
    producer = _local(local_spans, "apply_async/windags.review.stage1", trace_int)
    assert submit.parent is not None and submit.parent.span_id == root.get_span_context().span_id
    assert producer.parent is not None and producer.parent.span_id == submit.context.span_id
    assert producer.kind is SpanKind.PRODUCER

    # Across processes, each hop's consumer span is the child of its producer span.
    consumer = spans["run/windags.review.stage1"]
    assert consumer.kind == _KIND_CONSUMER
    assert consumer.parent_id == f"{producer.context.span_id:016x}"
    parent_of = {
        "windags.stage1": "run/windags.review.stage1",
        "apply_async/windags.review.router": "run/windags.review.stage1",
        "run/windags.review.router": "apply_async/windags.review.router",
        "windags.router": "run/windags.review.router",
        "apply_async/windags.review.stage2": "run/windags.review.router",
        "run/windags.review.stage2": "apply_async/windags.review.stage2",
        "windags.stage2": "run/windags.review.stage2",
        "windags.judge ceiling": "windags.stage2",
    }
    for child, parent in parent_of.items():
        assert spans[child].parent_id == spans[parent].span_id, (child, parent)
    assert spans["apply_async/windags.review.stage2"].kind == _KIND_PRODUCER

    # The seed's telemetry rides on the stage spans.
    stage1 = spans["windags.stage1"].attributes
    assert stage1["windags.dag_id"] == dag
    assert stage1["windags.node_id"] == "release-notes"
    assert stage1["windags.attempt"] == 1
    assert stage1["windags.floor.passed"] is True
    assert stage1["windags.wall.resolution"] in {"pass", "pass_with_warning", "fail"}
    assert "windags.wall.grade" in stage1
    router = spans["windags.router"].attributes
    assert router["windags.escalation.escalate"] is True
    assert router["windags.escalation.reason"] == "final_deliverable"
    for key in ("failure_probability", "downstream_waste", "expected_waste", "stage2_cost"):
        assert isinstance(router[f"windags.escalation.{key}"], float)
    assert router["windags.outcome"] == "hop:windags.review.stage2"
    stage2 = spans["windags.stage2"].attributes
    assert stage2["windags.decision"] == entry.payload.decision.value
    assert stage2["windags.near_misses.count"] == len(entry.payload.near_misses)
    assert stage2["windags.stream.added"] is True
    assert stage2["windags.stream.entry_id"] == entry.entry_id
    judge = spans["windags.judge ceiling"].attributes
    assert judge["gen_ai.response.model"] == entry.payload.stage2.model  # type: ignore[union-attr]
    assert {"gen_ai.usage.input_tokens", "windags.judge.cost_usd"} <= set(judge)

    # The stream entry lets a subscriber continue the trace from the publishing span.
    _, entry_trace, entry_span, _ = entry.fields["traceparent"].split("-")
    assert (entry_trace, entry_span) == (trace_id, spans["windags.stage2"].span_id)


def test_every_review_of_a_batch_gets_its_own_trace_named_in_its_result(
    runtime: Runtime, receiver: Receiver, local_spans: InMemorySpanExporter
) -> None:
    dag = fresh_dag()
    names = ["good_python.json", "floor_failure_python.json", "final_deliverable.json"]
    runtime.client.submit_many([sample(n, dag_id=dag) for n in names])
    entries = runtime.entries(dag, len(names))
    results = [e.payload for e in entries if isinstance(e.payload, ReviewResult)]
    assert len(results) == len(names)
    trace_ids = {r.trace_id for r in results}
    assert None not in trace_ids and len(trace_ids) == len(names)

    submits = [s for s in local_spans.get_finished_spans() if s.name == "windags.submit"]
    by_trace = {f"{s.context.trace_id:032x}": s for s in submits}
    for entry in entries:
        result = entry.payload
        assert isinstance(result, ReviewResult) and result.trace_id is not None
        assert dict(by_trace[result.trace_id].attributes or {})["windags.node_id"] == result.node_id
        publisher = "windags.stage2" if result.escalation.escalate else "windags.router"
        assert wait_until(partial(_has, receiver, result.trace_id, publisher), timeout_s=30)
        remote = receiver.trace(result.trace_id)
        assert _one(remote, "windags.stage1").attributes["windags.node_id"] == result.node_id
        assert entry.fields["traceparent"].split("-")[2] == _one(remote, publisher).span_id
        if not result.escalation.escalate:
            assert not [s for s in remote if s.name == "windags.stage2"]


def test_workers_export_the_fleet_metrics(runtime: Runtime, receiver: Receiver) -> None:
    dag = fresh_dag()
    runtime.client.submit_many(
        [sample("final_deliverable.json", dag_id=dag), sample("good_python.json", dag_id=dag)]
    )
    runtime.entries(dag, 2)

    def exported(name: str, **attrs: Any) -> bool:
        # Each worker process exports on its own interval: wait for the point, never race it.
        return wait_until(
            lambda: any(attrs.items() <= point.items() for point in receiver.points(name)),
            timeout_s=20,
        )

    assert exported("windags.reviews", decision="accept")
    assert exported("windags.review.cost", dag_id=dag)
    assert exported("windags.escalation.decisions", escalated=True)
    assert exported("windags.escalation.decisions", escalated=False)
    for stage in STAGES:
        assert exported("windags.stage.duration", stage=stage)
        assert exported("windags.queue.depth", queue=stage)
    assert exported("windags.judge.calls", tier="ceiling", outcome="ok")
    assert exported("windags.escalation.rolling_rate")
    assert exported("windags.escalation.cascade")


def test_a_worker_with_a_prometheus_port_serves_its_metrics_there(
    runtime: Runtime, stage2_metrics_port: int
) -> None:
    dag = fresh_dag()
    runtime.client.submit(sample("final_deliverable.json", dag_id=dag))
    runtime.entries(dag, 1)

    url = f"http://127.0.0.1:{stage2_metrics_port}/metrics"
    with urllib.request.urlopen(url, timeout=5) as reply:
        text = reply.read().decode()

    assert 'service_name="windags-it"' in text
    assert re.search(
        r'^windags_judge_calls_total\{.*outcome="ok".*tier="ceiling".*\} [1-9]', text, re.M
    )
    assert re.search(
        r'^windags_stage_duration_seconds_count\{.*stage="stage2".*\} [1-9]', text, re.M
    )
    assert not re.search(r'stage="stage1"', text), "each worker serves only its own metrics"
