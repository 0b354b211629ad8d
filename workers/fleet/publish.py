"""Publication of a finished review: once on its stream, its cost charged once with it.

The result is then remembered (the node's attempt record, the labels it carries) and,
when it waits for a person, put in the human review queue. A worker killed between the
entry and that bookkeeping leaves a redelivery that finds the entry published: it
finishes the bookkeeping (``HumanGate.after_publish``), adding nothing twice.
"""

from __future__ import annotations

from schemas.request import ReviewRequest
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
    """Publish once and, with the entry (one script), charge its cost to the DAG once."""
    charge = None
    if result.envelope.review_cost_usd > 0:
        key = f"{result.dag_id}:{result.node_id}:{result.attempt}"
        charge = deps.ledger.pending_charge(result.dag_id, key, result.envelope.review_cost_usd)
    published = deps.stream.publish_result(result, traceparent=traceparent, charge=charge)
    spans.note_published(result, added=published.added, entry_id=published.entry_id)
    deps.gate.after_publish(result, request, added=published.added)
