"""The refs lane: look up what an output cites, fold the answers in, on to the router.

Only outputs that cite something the lane must fetch, or name a package the live index
must confirm, come here; the rest go from Stage 1 to the router as they always did. The
refs workers run on gevent, so hundreds of fetches wait at once without stalling Stage 1's
CPU-bound workers or the router.
"""

from __future__ import annotations

from schemas.hops import Stage1Report
from schemas.request import ReviewRequest
from workers.fleet.deps import Deps
from workers.fleet.guard import Delivery, Job, guarded
from workers.fleet.next_hop import Hop, Outcome
from workers.fleet.queues import Queue, TaskName
from workers.fleet.tries import TryCount
from workers.lookups.steps import looked_up, plan_for


def handle_refs(
    identity_json: str,
    request_json: str,
    report_json: str,
    deps: Deps,
    *,
    traceparent: str | None = None,
    delivery: Delivery = Delivery.UNKNOWN,
) -> Outcome:
    """Plan again from the request (the same plan Stage 1 made), look up, hop to the router."""
    job = Job.of_hop(Queue.REFS, identity_json, request_json, delivery=delivery)

    def work(_: TryCount) -> Outcome:
        request = ReviewRequest.model_validate_json(request_json)
        report = Stage1Report.model_validate_json(report_json)
        plan = plan_for(request, report, deps.settings)
        report = looked_up(request, report, plan, deps.lane, deps.settings)
        return Hop(TaskName.ROUTER, (identity_json, request_json, report.model_dump_json()))

    return guarded(job, deps, work)
