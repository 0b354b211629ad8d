"""Stage 1: Floor and Wall on every node; bad input is refused with an error entry."""

from __future__ import annotations

from schemas.hops import ReviewIdentity
from schemas.request import ReviewRequest
from workers.errors import InvalidRequest
from workers.evaluate import run_stage1
from workers.evaluate.escalation.calibration import with_historical_reliability
from workers.fleet.deps import Deps
from workers.fleet.guard import Delivery, Job, guarded
from workers.fleet.next_hop import Hop, Outcome
from workers.fleet.queues import Queue, TaskName
from workers.fleet.refusals import as_text, refuse
from workers.fleet.tries import TryCount, digest
from workers.intake import decode_request, encode_request
from workers.lookups.steps import looked_up, plan_for
from workers.observe import spans
from workers.package_index import package_check
from workers.topology import with_derived_downstream


def handle_stage1(
    raw: object,
    deps: Deps,
    *,
    traceparent: str | None = None,
    delivery: Delivery = Delivery.UNKNOWN,
) -> Outcome:
    """Decode once, then Floor and Wall; the router gets the identity, request and report."""
    decoded = _decode(raw, deps)
    if isinstance(decoded, InvalidRequest):
        text = as_text(raw)
        refusal = Job(Queue.STAGE1, digest(text), text)
        return guarded(refusal, deps, lambda _: refuse(text, decoded, deps))
    request, whose = decoded, ReviewIdentity.of(decoded)
    job = Job(Queue.STAGE1, whose.key, as_text(raw), whose, check_published=True, delivery=delivery)

    def work(count: TryCount) -> Outcome:
        if count.published:
            return None
        # The conflict rules read the peer's record from outcomes when none was sent.
        judged = with_historical_reliability(request, deps.calibration.current())
        # A request without downstream gets it from its DAG's registered shape, if any.
        topology = None if judged.downstream else deps.dags.topology(judged.dag_id)
        judged, dag_version = with_derived_downstream(judged, topology)
        # Names newer than the snapshot stay suspect here: the index is never asked on
        # Stage 1's CPU-bound workers (a network lane asks it and re-grades).
        packages = package_check(deps.settings)
        report = run_stage1(judged, wall_judge=deps.wall_judge, packages=packages)
        report = report.model_copy(update={"dag_version": dag_version})
        spans.note_stage1(judged, report)
        # An output that cites something the lane must look up goes to the refs queue
        # first; one that cites nothing takes today's path.
        plan = plan_for(judged, report, deps.settings)
        if plan.needs_network:
            args = (whose.model_dump_json(), encode_request(judged), report.model_dump_json())
            return Hop(TaskName.REFS, args)
        report = looked_up(judged, report, plan, None, deps.settings)
        args = (whose.model_dump_json(), encode_request(judged), report.model_dump_json())
        return Hop(TaskName.ROUTER, args)

    return guarded(job, deps, work)


def _decode(raw: object, deps: Deps) -> ReviewRequest | InvalidRequest:
    if not isinstance(raw, str):  # another producer sent a JSON value, not its text
        kind = type(raw).__name__
        return InvalidRequest("(request)", f"the task argument must be a JSON string, not {kind}")
    try:
        return decode_request(
            raw,
            max_request_bytes=deps.settings.max_request_bytes,
            max_output_chars=deps.settings.max_output_chars,
        )
    except InvalidRequest as exc:
        return exc
