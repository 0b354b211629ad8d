"""Stage 2: the Ceiling for escalated nodes, judged once per review, then publication."""

from __future__ import annotations

from dataclasses import replace

from schemas.hops import RoutedReview
from schemas.request import ReviewRequest
from workers.evaluate import finalize
from workers.fleet.deps import Deps
from workers.fleet.guard import Delivery, Job, guarded
from workers.fleet.judge_claim import cached_ceiling
from workers.fleet.next_hop import CLAIM_WAIT, Outcome
from workers.fleet.publish import publish
from workers.fleet.queues import Queue
from workers.observe import spans, tracecontext

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
    bounds the waits.
    """
    job = Job.of_hop(Queue.STAGE2, identity_json, request_json, check_published=True)
    if job.whose is not None:
        # Counted on every delivery (``Job.counts_lazily``); a replay counts the try it replays.
        replay = delivery if delivery in _KEPT else Delivery.UNKNOWN
        job = replace(job, claim=deps.keys.stage2_claim(job.whose.key), delivery=replay)

    def work(published: bool) -> Outcome:
        if published:
            return None
        request = ReviewRequest.model_validate_json(request_json)
        routed = RoutedReview.model_validate_json(routed_json)
        stage2 = cached_ceiling(request, routed.report, deps)
        if stage2 is None:
            return CLAIM_WAIT
        spans.note_stage2(request, stage2)
        trace_id = tracecontext.trace_id_of(traceparent)
        request = deps.records.with_history(request)  # the fleet's attempts when none sent
        result = finalize(request, routed.report, routed.escalation, stage2, trace_id=trace_id)
        publish(result, request, deps, traceparent=traceparent)
        return None

    return guarded(job, deps, work)
