"""Where spans and metrics go: OTLP/HTTP to a collector, or the console.

The SDK and exporter packages load only when a process sets telemetry up.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from workers.settings import Settings

if TYPE_CHECKING:
    from opentelemetry.sdk.metrics.export import MetricReader
    from opentelemetry.sdk.trace.export import SpanExporter


def _otlp_url(endpoint: str, signal: str) -> str:
    return f"{endpoint.rstrip('/')}/v1/{signal}"


def span_exporter(settings: Settings) -> SpanExporter:
    """OTLP/HTTP to ``otel_endpoint``, else the console (the worker's stdout)."""
    if settings.otel_endpoint:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        return OTLPSpanExporter(endpoint=_otlp_url(settings.otel_endpoint, "traces"))
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter

    # Celery replaces sys.stdout with a logging proxy; the real stdout keeps the JSON whole.
    return ConsoleSpanExporter(out=sys.__stdout__ or sys.stdout)


def metric_reader(settings: Settings) -> MetricReader:
    """A periodic reader exporting like ``span_exporter`` does."""
    from opentelemetry.sdk.metrics.export import (
        ConsoleMetricExporter,
        MetricExporter,
        PeriodicExportingMetricReader,
    )

    exporter: MetricExporter
    if settings.otel_endpoint:
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

        exporter = OTLPMetricExporter(endpoint=_otlp_url(settings.otel_endpoint, "metrics"))
    else:
        exporter = ConsoleMetricExporter(out=sys.__stdout__ or sys.stdout)
    # The interval comes from OTEL_METRIC_EXPORT_INTERVAL (default 60 s).
    return PeriodicExportingMetricReader(exporter)
