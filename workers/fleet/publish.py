"""Publication of a finished review: once on its stream, its cost charged once with it.

The node's attempt record goes in the same script as the entry; the labels the result
carries are recorded after it and, when it waits for a person, it is put in the human
review queue. A worker killed between the entry and that bookkeeping leaves a redelivery
that finds the entry published: it finishes the bookkeeping (``HumanGate.after_publish``),
adding nothing twice. An accepted node has nothing after the entry: one round trip.
"""

from __future__ import annotations

from schemas.request import ReviewRequest, review_key
from schemas.result import ReviewResult
from workers.fleet.deps import Deps
from workers.observe import spans


def publish(
    result: ReviewResult,
    request: ReviewRequest,
    deps: Deps,
    *,
    traceparent: str | None = None,
) -> None:
    """Publish once and, with the entry (one script), charge its cost and book it once."""
    charge = None
    if result.envelope.review_cost_usd > 0:
        key = review_key(result.dag_id, result.node_id, result.attempt)
        charge = deps.ledger.pending_charge(result.dag_id, key, result.envelope.review_cost_usd)
    booking = deps.gate.booking(result, request)
    published = deps.stream.publish_result(
        result, traceparent=traceparent, charge=charge, booking=booking
    )
    spans.note_published(result, added=published.added, entry_id=published.entry_id)
    deps.gate.after_publish(result, request, added=published.added, booking=booking)
