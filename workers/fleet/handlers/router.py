"""The router: the escalation decision, and publication when Stage 2 is not warranted."""

from __future__ import annotations

from schemas.hops import RoutedReview, Stage1Report
from schemas.request import ReviewRequest
from workers.evaluate import decide_escalation, finalize
from workers.fleet.deps import Deps
from workers.fleet.guard import Delivery, Job, guarded
from workers.fleet.next_hop import Hop, Outcome
from workers.fleet.publish import publish
from workers.fleet.queues import Queue, TaskName
from workers.fleet.tries import TryCount
from workers.observe import spans, tracecontext


def handle_router(
    identity_json: str,
    request_json: str,
    report_json: str,
    deps: Deps,
    *,
    traceparent: str | None = None,
    delivery: Delivery = Delivery.UNKNOWN,
) -> Outcome:
    """Decide on Stage 2 from the request and Stage 1's report; publish when not escalated."""
    job = Job.of_hop(Queue.ROUTER, identity_json, request_json, delivery=delivery)

    def work(_: TryCount) -> Outcome:
        request = ReviewRequest.model_validate_json(request_json)
        report = Stage1Report.model_validate_json(report_json)
        settings = deps.settings
        escalation = decide_escalation(
            request,
            stage2_price=settings.price_of(settings.stage2_model),
            stage1=report.stage1,
            budget_left=deps.ledger.has_budget(request.dag_id, settings.dag_budget_usd),
            # The learned calibration, cached per process; None (the seed's prior) if absent.
            calibration=deps.calibration.current(),
            dag_version=report.dag_version,
        )
        spans.note_escalation(request, escalation)
        if escalation.escalate:
            routed = RoutedReview(report=report, escalation=escalation)
            return Hop(TaskName.STAGE2, (identity_json, request_json, routed.model_dump_json()))
        trace_id = tracecontext.trace_id_of(traceparent)
        request = deps.records.with_history(request)  # the fleet's attempts when none sent
        result = finalize(request, report, escalation, None, trace_id=trace_id)
        publish(result, request, deps, traceparent=traceparent)
        return None

    return guarded(job, deps, work)
