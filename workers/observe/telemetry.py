"""OpenTelemetry for the fleet: provider setup per process, and the spans a review makes.

Why it looks like this (docs/architecture.md, "What the stack promises"):

- The SDK's batch processors run a thread, which does not survive ``fork``. So a worker
  sets up after the fork (``worker_process_init``) under prefork, or in ``worker_init``
  for the threads and solo pools, which never fork; ``setup`` is idempotent per process.
- Spans still buffered when a pool child recycles are lost unless flushed, hence
  ``shutdown`` (force-flush, then shut down) on ``worker_process_shutdown`` and
  ``worker_shutdown``.
- ``CeleryInstrumentor`` carries the context across each queue hop in message headers
  (producer span ``apply_async/<task>``, consumer span ``run/<task>``). The results stream
  carries none by itself, so the publishing stage puts its ``traceparent`` into the entry
  and its trace id into ``ReviewResult.trace_id``.
- Off by default: with ``otel_enabled`` false no provider is installed, the tracer and
  meter are the API's proxies (no-ops unless the embedding process installed its own
  provider), and every helper skips attribute work on a non-recording span.
- ``prometheus_port`` adds a scrape endpoint to the same meter (``workers/observe/prometheus.py``);
  set alone, it turns on metrics without exporting spans.

Only the OpenTelemetry API is imported at module level; the SDK, exporters and the Celery
instrumentation load inside ``setup``, so importing the engine's callers stays light.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from opentelemetry import metrics, trace

from workers.observe import exporters
from workers.observe.metrics import Instruments, QueueDepths
from workers.observe.prometheus import MetricsEndpoint
from workers.settings import Settings

if TYPE_CHECKING:
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import MetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter


log = logging.getLogger("windags.telemetry")

SCOPE = "windags.evaluator"
"""Instrumentation scope of every span and metric this package makes."""


@dataclass
class Telemetry:
    """This process's tracer and instruments, and the SDK providers when it owns them."""

    tracer: trace.Tracer
    instruments: Instruments
    tracer_provider: TracerProvider | None = None
    meter_provider: MeterProvider | None = None
    pid: int = field(default_factory=os.getpid)
    celery_instrumented: bool = False
    installed_global: bool = False
    metrics_endpoint: MetricsEndpoint | None = None

    @property
    def active(self) -> bool:
        """Whether this process exports through providers it set up itself."""
        return self.tracer_provider is not None


def _proxy() -> Telemetry:
    """Telemetry before setup (or after a non-global shutdown).

    The tracer is the API's proxy, so a host process's own provider still sees the client's
    spans; the instruments are no-ops, so that a later setup does not register a second,
    duplicate set through the proxy meter.
    """
    return Telemetry(
        tracer=trace.get_tracer(SCOPE), instruments=Instruments(metrics.NoOpMeter(SCOPE))
    )


def _silent() -> Telemetry:
    """API no-ops, for a process whose global providers were shut down."""
    return Telemetry(tracer=trace.NoOpTracer(), instruments=Instruments(metrics.NoOpMeter(SCOPE)))


_state: Telemetry = _proxy()


def current() -> Telemetry:
    """The telemetry of this process (set up or not)."""
    return _state


def setup(
    settings: Settings,
    *,
    span_exporter: SpanExporter | None = None,
    metric_reader: MetricReader | None = None,
    install_global: bool = True,
    instrument_celery: bool = True,
    queue_depths: QueueDepths | None = None,
    serve_metrics: bool = True,
) -> Telemetry:
    """Install tracing and metrics for this process, once; a no-op when telemetry is off.

    Args:
        settings: ``otel_enabled``, ``otel_endpoint`` and ``otel_service_name`` decide.
        span_exporter: overrides the configured exporter (tests: in-memory); exports
            synchronously so a test sees a span as soon as it ends.
        metric_reader: overrides the configured periodic reader (tests: in-memory).
        install_global: also make these the global providers (workers do; tests don't,
            since a global provider can be set only once per process).
        instrument_celery: propagate context through Celery messages.
        queue_depths: reads waiting messages per queue for the ``windags.queue.depth`` gauge.
        serve_metrics: serve ``prometheus_port`` (workers do; the submitting client, which
            records no metrics, does not take the port).
    """
    global _state
    tracing = settings.otel_enabled or span_exporter is not None
    scraped = serve_metrics and settings.prometheus_port is not None
    if not (tracing or scraped):
        return _state
    if _state.active and _state.pid == os.getpid():
        return _state
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
    from opentelemetry.sdk.trace.sampling import ALWAYS_OFF

    resource = Resource.create(
        {"service.name": settings.otel_service_name, "process.pid": os.getpid()}
    )
    # Metrics alone: spans are not recorded at all, so span helpers skip their work.
    tracer_provider = TracerProvider(resource=resource, sampler=None if tracing else ALWAYS_OFF)
    if span_exporter is not None:
        tracer_provider.add_span_processor(SimpleSpanProcessor(span_exporter))
    elif tracing:
        tracer_provider.add_span_processor(BatchSpanProcessor(exporters.span_exporter(settings)))
    readers: list[MetricReader] = []
    if metric_reader is not None:
        readers.append(metric_reader)
    elif tracing:
        readers.append(exporters.metric_reader(settings))
    endpoint = None
    if scraped and settings.prometheus_port is not None:
        endpoint = MetricsEndpoint(settings.prometheus_port)
        readers.append(endpoint.reader)
    meter_provider = MeterProvider(resource=resource, metric_readers=readers)
    if install_global:
        trace.set_tracer_provider(tracer_provider)
        metrics.set_meter_provider(meter_provider)
    state = Telemetry(
        tracer=tracer_provider.get_tracer(SCOPE),
        instruments=Instruments(
            meter_provider.get_meter(SCOPE),
            monitor=_state.instruments.monitor,
            queue_depths=queue_depths,
        ),
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
        installed_global=install_global,
        metrics_endpoint=endpoint,
    )
    if instrument_celery and tracing:
        state.celery_instrumented = _instrument_celery(tracer_provider, meter_provider)
    _state = state
    if tracing:
        log.info(
            "telemetry on: exporting to %s",
            settings.otel_endpoint or ("the given exporter" if span_exporter else "the console"),
        )
    return state


def shutdown() -> None:
    """Flush and stop this process's providers (spans of a recycled child are kept)."""
    global _state
    state = _state
    if not state.active or state.pid != os.getpid():
        return
    if state.celery_instrumented:
        _celery_instrumentor().uninstrument()
    assert state.tracer_provider is not None and state.meter_provider is not None
    state.tracer_provider.force_flush()
    state.tracer_provider.shutdown()
    state.meter_provider.shutdown()  # collects and exports once more
    if state.metrics_endpoint is not None:
        state.metrics_endpoint.close()
    # The global proxies would now reach the shut-down providers: go quiet instead.
    after = _proxy() if not state.installed_global else _silent()
    after.instruments.monitor = state.instruments.monitor
    _state = after


def force_flush() -> None:
    """Export whatever is buffered now, keeping the providers running."""
    state = _state
    if state.active and state.pid == os.getpid():
        assert state.tracer_provider is not None and state.meter_provider is not None
        state.tracer_provider.force_flush()
        state.meter_provider.force_flush()


def _celery_instrumentor() -> Any:
    """The process-wide instrumentor (a singleton); contrib ships it without type hints."""
    from opentelemetry.instrumentation.celery import CeleryInstrumentor

    return CeleryInstrumentor()  # type: ignore[no-untyped-call]


def _instrument_celery(tracer_provider: TracerProvider, meter_provider: MeterProvider) -> bool:
    instrumentor = _celery_instrumentor()
    if instrumentor.is_instrumented_by_opentelemetry:
        return False
    instrumentor.instrument(tracer_provider=tracer_provider, meter_provider=meter_provider)
    return True
