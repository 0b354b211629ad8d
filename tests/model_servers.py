"""Fixtures for tests that talk to a model judge: a local Messages API server, and telemetry
captured in memory. Registered for every test module by ``conftest.pytest_plugins``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from workers.observe import telemetry
from workers.settings import Settings
from workers.testing.messages_api.server import ServerHandle, running_server


@pytest.fixture
def server() -> Iterator[ServerHandle]:
    """A Messages API server on a free port that answers tool calls as scripted."""
    with running_server() as handle:
        yield handle


@pytest.fixture
def toolless() -> Iterator[ServerHandle]:
    """A server that ignores tools and tool_choice: every verdict comes back as text."""
    with running_server(tool_use=False) as handle:
        yield handle


@pytest.fixture
def captured() -> Iterator[tuple[InMemorySpanExporter, InMemoryMetricReader]]:
    """Spans and metrics of this test, in memory; nothing installed globally."""
    spans, reader = InMemorySpanExporter(), InMemoryMetricReader()
    telemetry.setup(
        Settings(redis_url="redis://127.0.0.1:1/0"),
        span_exporter=spans,
        metric_reader=reader,
        install_global=False,
        instrument_celery=False,
    )
    yield spans, reader
    telemetry.shutdown()
