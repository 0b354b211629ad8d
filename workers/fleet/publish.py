"""Publication of a finished review: once on its stream, its cost charged once with it.

The review memory (``Deps.records``, ``workers.records.bookkeeping``) does the rest, in
one call: the labels the result carries go first, in one round trip; the booking (the
node's attempt record, and the mark unless a person must be asked) goes in the same
script as the entry; after it, for a person, the human gate's queue and the mark. A
worker killed between the entry and that bookkeeping leaves a redelivery that finds the
entry published: it finishes the bookkeeping, adding nothing twice. A node no person
waits for has nothing after the entry, whose round trip also acks the delivery of the
task that published it (``workers.fleet.transport.settle``): an accepted node's one
round trip, an escalated one's two after the model call.
"""

from __future__ import annotations

from dataclasses import replace

from schemas.request import ReviewRequest, review_key
from schemas.result import ReviewResult
from workers.fleet.deps import Deps
from workers.fleet.transport import settle
from workers.observe import spans
from workers.results.batch import Batch
from workers.results.booking import Booking, Settlement
from workers.results.stream import Published


def publish(
    result: ReviewResult,
    request: ReviewRequest,
    deps: Deps,
    *,
    traceparent: str | None = None,
    ahead: Batch | None = None,
) -> None:
    """Publish once and, with the entry (one script), charge its cost and book it once.

    ``ahead``: the caller's writes for the round trip before the entry's, with the labels
    (Stage 2 keeps its report and releases its claim there).
    """
    charge = None
    if result.envelope.review_cost_usd > 0:
        key = review_key(result.dag_id, result.node_id, result.attempt)
        charge = deps.ledger.pending_charge(result.dag_id, key, result.envelope.review_cost_usd)

    def write(booking: Booking) -> Published:
        delivery = _settled_by(booking, deps)
        if delivery is not None:
            keys = deps.settings.keys
            settles = Settlement(
                keys.unacked, keys.unacked_index, keys.reserved(delivery.queue), delivery.tag
            )
            booking = replace(booking, settles=settles)
        published = deps.stream.publish_result(
            result, traceparent=traceparent, charge=charge, booking=booking
        )
        if delivery is not None and published.added:
            settle.settled(delivery)
        spans.note_published(result, added=published.added, entry_id=published.entry_id)
        return published

    deps.records.publish(result, request, write, deps.gate, ahead=ahead)


def _settled_by(booking: Booking, deps: Deps) -> settle.Delivery | None:
    """The running task's delivery, when this entry completes its work and may ack it."""
    if booking.mark is None or not deps.settings.state_on_broker:
        return None  # more follows the entry, or the broker is another Redis
    return settle.take()
