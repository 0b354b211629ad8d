"""Publication of a finished review: once on its stream, its cost charged once with it.

The review memory (``Deps.records``, ``workers.records.bookkeeping``) does the rest, in
one call: the booking (the node's attempt record, and the mark when nothing follows)
goes in the same script as the entry; after it, the labels the result carries, the
human gate's queue when it waits for a person, and the mark. A worker killed between
the entry and that bookkeeping leaves a redelivery that finds the entry published: it
finishes the bookkeeping, adding nothing twice. An accepted node has nothing after the
entry: one round trip.
"""

from __future__ import annotations

from schemas.request import ReviewRequest, review_key
from schemas.result import ReviewResult
from workers.fleet.deps import Deps
from workers.observe import spans
from workers.results.booking import Booking
from workers.results.stream import Published


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

    def write(booking: Booking) -> Published:
        published = deps.stream.publish_result(
            result, traceparent=traceparent, charge=charge, booking=booking
        )
        spans.note_published(result, added=published.added, entry_id=published.entry_id)
        return published

    deps.records.publish(result, request, write, deps.gate)
