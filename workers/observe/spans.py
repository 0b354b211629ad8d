"""The spans and span attributes a review makes, over the tracer ``telemetry`` set up.

Every helper is cheap when tracing is off: attribute work is skipped on a span that is
not recording.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind
from opentelemetry.util.types import AttributeValue

from workers.observe.metrics import PRIOR_VERSION
from workers.observe.telemetry import current

if TYPE_CHECKING:
    from schemas.hops import Stage1Report, Stage2Report
    from schemas.references import FetchedPage
    from schemas.request import ReviewRequest
    from schemas.result import EscalationDecision, ReviewResult


@contextmanager
def span(
    name: str,
    *,
    kind: SpanKind = SpanKind.INTERNAL,
    attributes: dict[str, AttributeValue] | None = None,
) -> Iterator[Span]:
    """A span of this package's tracer, current inside the block."""
    with current().tracer.start_as_current_span(name, kind=kind, attributes=attributes) as opened:
        yield opened


@contextmanager
def submit_span(request: ReviewRequest) -> Iterator[Span]:
    """The client's span around enqueueing one review.

    It is the root of the review's trace, unless the caller already has a span open: then
    the review joins the caller's trace.
    """
    with span("windags.submit", attributes=_identity(request)) as opened:
        yield opened


@contextmanager
def stage_span(stage: str) -> Iterator[Span]:
    """The span of one stage's handler, and its latency in ``windags.stage.duration``."""
    started = time.perf_counter()
    outcome = "ok"
    try:
        with span(f"windags.{stage}", attributes={"windags.stage": stage}) as opened:
            yield opened
    except BaseException:
        outcome = "error"
        raise
    finally:
        current().instruments.stage_duration.record(
            time.perf_counter() - started, {"stage": stage, "outcome": outcome}
        )


def _identity(request: ReviewRequest) -> dict[str, AttributeValue]:
    return {
        "windags.dag_id": request.dag_id,
        "windags.node_id": request.node_id,
        "windags.attempt": request.attempt,
    }


def _annotate(attributes: dict[str, AttributeValue]) -> None:
    current_span = trace.get_current_span()
    if current_span.is_recording():
        current_span.set_attributes(attributes)


def note_stage1(request: ReviewRequest, report: Stage1Report) -> None:
    """Floor and Wall outcome on the current (stage1) span."""
    if not trace.get_current_span().is_recording():
        return
    floor, wall = report.stage1.floor, report.stage1.wall
    attributes = {
        **_identity(request),
        "windags.floor.passed": floor.passed,
        "windags.floor.violations": [v.code for v in floor.violations],
        "windags.wall.passed": wall.passed,
        "windags.wall.resolution": wall.resolution.value,
        "windags.wall.issues": [i.code for i in wall.issues],
        "windags.stage1.cost_usd": report.cost_usd,
    }
    if wall.grade is not None:
        attributes["windags.wall.grade"] = wall.grade
    _annotate(attributes)


def note_escalation(request: ReviewRequest, escalation: EscalationDecision) -> None:
    """The router's decision with its economic breakdown; counts it and feeds the monitor."""
    version = escalation.model_version or PRIOR_VERSION
    current().instruments.record_escalation(
        escalation.escalate,
        escalation.reason.value,
        failure_probability=escalation.failure_probability,
        expected_value=escalation.expected_value,
        model_version=version,
    )
    if not trace.get_current_span().is_recording():
        return
    attributes: dict[str, AttributeValue] = {
        **_identity(request),
        "windags.escalation.escalate": escalation.escalate,
        "windags.escalation.reason": escalation.reason.value,
        "windags.escalation.failure_probability": escalation.failure_probability,
        "windags.escalation.raw_failure_probability": escalation.raw_failure_probability,
        "windags.escalation.downstream_waste": escalation.downstream_waste,
        "windags.escalation.expected_waste": escalation.expected_waste,
        "windags.escalation.stage2_cost": escalation.stage2_cost,
        "windags.escalation.rolling_rate": current().instruments.monitor.rate,
        "windags.escalation.model_version": version,
    }
    # The learned router's breakdown: prior, skill posterior, evidence terms, catch rate, value.
    extra = ("prior_failure_probability", "skill_success_rate", "catch_rate", "expected_value")
    for name in extra:
        if (value := getattr(escalation, name)) is not None:
            attributes[f"windags.escalation.{name}"] = value
    for term, value in escalation.evidence_terms.items():
        attributes[f"windags.escalation.evidence.{term}"] = value
    if escalation.suppressed_by:
        attributes["windags.escalation.suppressed_by"] = escalation.suppressed_by.value
    _annotate(attributes)


def note_stage2(request: ReviewRequest, report: Stage2Report) -> None:
    """The Ceiling's outcome on the current (stage2) span."""
    if not trace.get_current_span().is_recording():
        return
    ceiling = report.stage2
    attributes: dict[str, AttributeValue] = {
        **_identity(request),
        "windags.ceiling.status": ceiling.status.value,
        "windags.ceiling.model": ceiling.model,
        "windags.ceiling.calls": ceiling.calls,
        "windags.ceiling.cost_usd": report.cost_usd,
        "gen_ai.usage.input_tokens": report.usage.input_tokens,
        "gen_ai.usage.output_tokens": report.usage.output_tokens,
    }
    if ceiling.error:
        attributes["windags.ceiling.error"] = ceiling.error
    _annotate(attributes)


def note_published(result: ReviewResult, *, added: bool, entry_id: str) -> None:
    """The verdict on the publishing span; counts reviews and spend once per review key."""
    if added:
        current().instruments.reviews.add(
            1, {"decision": result.decision.value, "escalated": result.escalation.escalate}
        )
        current().instruments.review_cost.add(
            result.envelope.review_cost_usd, {"dag_id": result.dag_id}
        )
    if not trace.get_current_span().is_recording():
        return
    kinds = sorted({m.kind.value for m in result.near_misses})
    _annotate(
        {
            "windags.dag_id": result.dag_id,
            "windags.node_id": result.node_id,
            "windags.attempt": result.attempt,
            "windags.decision": result.decision.value,
            "windags.basis.dimension": result.basis.dimension,
            "windags.basis.score": result.basis.score,
            "windags.near_misses.count": len(result.near_misses),
            "windags.near_misses.kinds": kinds,
            "windags.review.cost_usd": result.envelope.review_cost_usd,
            "gen_ai.usage.input_tokens": result.envelope.tokens.input_tokens,
            "gen_ai.usage.output_tokens": result.envelope.tokens.output_tokens,
            "windags.stream.entry_id": entry_id,
            "windags.stream.added": added,
        }
    )


@contextmanager
def fetch_span(url: str) -> Iterator[Span]:
    """The span of one cited URL's look-up (the cache, or the requests it took)."""
    with span("windags.refs.fetch", kind=SpanKind.CLIENT, attributes={"url.full": url[:300]}) as o:
        yield o


def note_fetch(opened: Span, page: FetchedPage, *, source: str) -> None:
    """What a look-up found, on its span and in the ``windags.refs.*`` metrics.

    ``source``: ``own`` (this worker's look-up: requests sent, or refused before any),
    ``cache``, or ``none`` (not looked up: the budget ran out first).
    """
    instruments = current().instruments
    outcome = page.outcome.value
    instruments.refs_lookups.add(1, {"source": source, "outcome": outcome})
    if page.outcome.value == "refused":
        instruments.refs_refusals.add(1)
    if page.requests:
        status = str(page.status) if page.status is not None else "none"
        instruments.refs_requests.add(page.requests, {"outcome": outcome, "status": status})
        instruments.refs_bytes.add(page.body_bytes)
    if opened.is_recording():
        last = page.chain[-1] if page.chain else None
        opened.set_attributes(
            {
                "windags.refs.source": source,
                "windags.refs.outcome": outcome,
                "windags.refs.requests": page.requests,
                "windags.refs.bytes": page.body_bytes,
                "windags.refs.confirmed": page.confirmed,
                "http.response.status_code": page.status or 0,
                "network.peer.address": (last.address if last else None) or "",
            }
        )


def set_outcome(opened: Span, outcome: str) -> None:
    """Mark what a stage handed on (``hop:<task>``, ``retry``, ``done``)."""
    if opened.is_recording():
        opened.set_attribute("windags.outcome", outcome)
