"""Stage 2: the Ceiling for escalated nodes, judged once per review, then publication."""

from __future__ import annotations

from dataclasses import replace

from schemas.hops import RoutedReview
from schemas.request import ReviewRequest
from workers.evaluate import finalize
from workers.fleet.deps import Deps
from workers.fleet.guard import Delivery, Job, guarded
from workers.fleet.judge_claim import CeilingClaim, stage2_claim
from workers.fleet.next_hop import CLAIM_WAIT, Outcome
from workers.fleet.publish import publish
from workers.fleet.queues import Queue
from workers.fleet.tries import TryCount
from workers.observe import spans, tracecontext
from workers.results.batch import Batch

#: What Stage 2 keeps of a delivery: a replay's (it counts none), a counted replay's (its
#: poison entry says why). Every other delivery counts as it runs.
_KEPT = frozenset({Delivery.REPLAY, Delivery.FIRST_REPLAY, Delivery.REPLAY_COUNTED})


def handle_stage2(
    identity_json: str,
    request_json: str,
    routed_json: str,
    deps: Deps,
    *,
    traceparent: str | None = None,
    delivery: Delivery = Delivery.UNKNOWN,
) -> Outcome:
    """The Ceiling; a delivery while another worker judges the same review waits.

    Every delivery is counted (a replay aside: ``workers/fleet/recovery.py``): the claim
    bounds the waits. The count takes the claim (``workers.fleet.judge_claim``).
    """
    job = Job.of_hop(Queue.STAGE2, identity_json, request_json, check_published=True)
    if job.whose is not None:
        # Counted on every delivery (``Job.counts_lazily``); a replay counts the try it replays.
        replay = delivery if delivery in _KEPT else Delivery.UNKNOWN
        job = replace(job, claim=stage2_claim(deps, job.whose.key), delivery=replay)

    def work(count: TryCount) -> Outcome:
        claim = job.claim
        if claim is None:  # an identity that named no review: the request's claim, alone
            if count.published:
                return None
            claim = stage2_claim(deps, ReviewRequest.model_validate_json(request_json).review_key)
            count = deps.tries.claim(claim)
        ceiling = CeilingClaim(deps, claim, count)
        try:
            if count.published:
                return None
            request = ReviewRequest.model_validate_json(request_json)
            routed = RoutedReview.model_validate_json(routed_json)
            # The fleet's attempts when none were sent, read before the model call: after
            # it, nothing but the report's keeping may meet Redis before the entry's round trip.
            known = deps.records.with_history(request)
            stage2 = ceiling.ceiling(request, routed.report)
            if stage2 is None:
                return CLAIM_WAIT
            spans.note_stage2(request, stage2)
            trace_id = tracecontext.trace_id_of(traceparent)
            result = finalize(known, routed.report, routed.escalation, stage2, trace_id=trace_id)
            ahead = ceiling.keep(Batch(deps.redis))
            publish(result, known, deps, traceparent=traceparent, ahead=ahead)
            return None
        finally:
            ceiling.release()

    return guarded(job, deps, work)
