"""Trace context across the results stream, which carries none by itself.

The publishing stage writes its ``traceparent`` into the stream entry and its trace id
into ``ReviewResult.trace_id``; a DAG node continues the trace with ``context_of``.
"""

from __future__ import annotations

import re

from opentelemetry.context import Context
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

_PROPAGATOR = TraceContextTextMapPropagator()
_TRACEPARENT = re.compile(r"^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$")


def traceparent() -> str | None:
    """The W3C ``traceparent`` of the current span, or None when nothing is traced."""
    carrier: dict[str, str] = {}
    _PROPAGATOR.inject(carrier)
    return carrier.get("traceparent")


def trace_id_of(value: str | None) -> str | None:
    """The hex trace id inside a ``traceparent``; None for a missing or invalid one."""
    match = _TRACEPARENT.match(value or "")
    if match is None or set(match.group(1)) == {"0"}:
        return None
    return match.group(1)


def context_of(value: str | None) -> Context:
    """A context whose parent is the span a ``traceparent`` names, for a subscriber.

    ``tracer.start_as_current_span("handle", context=context_of(delivery.traceparent))``
    continues the review's trace in the DAG node.
    """
    return _PROPAGATOR.extract({"traceparent": value} if value else {})
