"""What each queue's task does, without Celery: decode, call the engine, publish.

A handler returns the next hop (or nothing) instead of enqueueing it, so the Celery
tasks stay five-line adapters and tests drive handlers with real Redis and a scripted
judge, no broker needed.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass

from schemas.hops import RoutedReview, Stage1Report, Stage2Report
from schemas.request import ReviewRequest
from schemas.result import ErrorCode, ReviewError, ReviewResult
from workers import spans, telemetry
from workers.deps import Deps
from workers.errors import InvalidRequest
from workers.evaluate import decide_escalation, finalize, run_stage1
from workers.intake import OversizedRequest, decode_request, encode_request, identity_of
from workers.judges.ceiling import run_ceiling
from workers.queues import Queue, TaskName
from workers.tries import digest

log = logging.getLogger("windags.handlers")
MAX_RETRY_DELAY_S = 30.0


@dataclass(frozen=True, slots=True)
class Hop:
    """The next task to enqueue."""

    task: TaskName
    args: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RetryLater:
    """Run this task again after ``delay_s``; always far below the visibility timeout.

    ``counted=False`` marks a wait, not a failure (another worker holds the review's
    Stage 2 claim): ``_guarded`` takes that try back, so waiting never dead-letters a
    good review. Waits stay bounded by the claim's TTL (the Stage 2 hard limit): the
    claim is released when its holder ends, or expires, and the next try takes it.
    """

    delay_s: float
    error: str
    counted: bool = True


Outcome = Hop | RetryLater | None

#: The answer to a delivery of a review whose Ceiling another worker is running.
_CLAIM_WAIT = RetryLater(5.0, "another worker holds this review's Stage 2 claim", counted=False)


def handle_stage1(raw: str, deps: Deps, *, traceparent: str | None = None) -> Outcome:
    """Floor and Wall; refuse bad input with an error entry, never a silent drop."""
    identity = _identity(raw)

    def work(published: bool) -> Outcome:
        if not isinstance(raw, str):  # another producer sent a JSON value, not its text
            kind = type(raw).__name__
            wrong = InvalidRequest(
                "(request)", f"the task argument must be a JSON string, not {kind}"
            )
            _publish_invalid(_as_text(raw), wrong, deps)
            return None
        try:
            request = decode_request(
                raw,
                max_request_bytes=deps.settings.max_request_bytes,
                max_output_chars=deps.settings.max_output_chars,
            )
        except InvalidRequest as exc:
            _publish_invalid(raw, exc, deps)
            return None
        if _already_published(request, identity, published, deps):
            return None
        report = run_stage1(request, wall_judge=deps.wall_judge)
        spans.note_stage1(request, report)
        return Hop(TaskName.ROUTER, (encode_request(request), report.model_dump_json()))

    return _guarded(Queue.STAGE1, identity, raw, deps, work, check_published=True)


def handle_router(
    request_json: str, report_json: str, deps: Deps, *, traceparent: str | None = None
) -> Outcome:
    """The escalation decision; publish at once when Stage 2 is not warranted."""

    def work(_: bool) -> Outcome:
        request = ReviewRequest.model_validate_json(request_json)
        report = Stage1Report.model_validate_json(report_json)
        settings = deps.settings
        escalation = decide_escalation(
            request,
            stage2_price=settings.price_of(settings.stage2_model),
            stage1=report.stage1,
            budget_left=deps.ledger.has_budget(request.dag_id, settings.dag_budget_usd),
        )
        spans.note_escalation(request, escalation)
        if escalation.escalate:
            routed = RoutedReview(report=report, escalation=escalation)
            return Hop(TaskName.STAGE2, (request_json, routed.model_dump_json()))
        trace_id = telemetry.trace_id_of(traceparent)
        result = finalize(request, report, escalation, None, trace_id=trace_id)
        publish(result, deps, traceparent=traceparent)
        return None

    return _guarded(Queue.ROUTER, _identity(request_json), request_json, deps, work)


def handle_stage2(
    request_json: str, routed_json: str, deps: Deps, *, traceparent: str | None = None
) -> Outcome:
    """The Ceiling. A finished judgement is cached so a redelivery never pays twice."""
    identity = _identity(request_json)

    def work(published: bool) -> Outcome:
        request = ReviewRequest.model_validate_json(request_json)
        if _already_published(request, identity, published, deps):
            return None
        routed = RoutedReview.model_validate_json(routed_json)
        stage2 = _cached_ceiling(request, routed.report, deps)
        if stage2 is None:
            return _CLAIM_WAIT
        spans.note_stage2(request, stage2)
        trace_id = telemetry.trace_id_of(traceparent)
        result = finalize(request, routed.report, routed.escalation, stage2, trace_id=trace_id)
        publish(result, deps, traceparent=traceparent)
        return None

    def claimed() -> bool:
        return bool(deps.redis.exists(_claim_key(deps, identity)))

    return _guarded(
        Queue.STAGE2, identity, request_json, deps, work, check_published=True, busy=claimed
    )


#: What each task takes, for the error entry of a call that does not match.
_SIGNATURES = {
    Queue.STAGE1: "1 argument (the request's JSON text)",
    Queue.ROUTER: "2 arguments (the request's JSON, the Stage 1 report's JSON)",
    Queue.STAGE2: "2 arguments (the request's JSON, the routed review's JSON)",
}


def handle_malformed(
    stage: Queue, args: tuple[object, ...], kwargs: dict[str, object], deps: Deps
) -> Outcome:
    """A task called with arguments its handler cannot take (another producer's bug).

    Stage 1 answers with an ``invalid_request`` entry; router and stage2, whose
    arguments only the fleet produces, dead-letter the call as ``poison`` on its first
    try, since no retry can mend an argument list. Either entry is keyed by a digest of
    the arguments, never by a review key: a well-formed task of the same review still
    publishes its result. It goes to the stream of the DAG the first argument names.
    """
    # The call itself is the body: its digest, task included, keys the entry.
    raw = _as_text({"task": stage.value, "args": list(args), "kwargs": kwargs})
    about = _as_text(args[0]) if args else raw
    got = f"{len(args)} argument(s)" + (f" and keywords {sorted(kwargs)}" if kwargs else "")
    reason = f"the {stage.value} task takes {_SIGNATURES[stage]}, got {got}"
    identity = digest(raw)

    def work(_: bool) -> Outcome:
        if stage is Queue.STAGE1:
            _publish_invalid(raw, InvalidRequest("(arguments)", reason), deps, about=about)
        else:
            _give_up(raw, identity, reason, 1, deps, about=about)
        return None

    return _guarded(stage, identity, raw, deps, work)


def publish(result: ReviewResult, deps: Deps, *, traceparent: str | None = None) -> None:
    """Publish once and, with the entry (one script), charge its cost to the DAG once."""
    charge = None
    if result.envelope.review_cost_usd > 0:
        key = f"{result.dag_id}:{result.node_id}:{result.attempt}"
        charge = deps.ledger.pending_charge(result.dag_id, key, result.envelope.review_cost_usd)
    published = deps.stream.publish_result(result, traceparent=traceparent, charge=charge)
    spans.note_published(result, added=published.added, entry_id=published.entry_id)


def _already_published(request: ReviewRequest, identity: str, published: bool, deps: Deps) -> bool:
    """Whether the review is on its stream: the try's prefetched answer, else Redis.

    The prefetched answer is about ``identity``, the review key of any body that decodes.
    """
    if request.review_key == identity:
        return published
    return deps.stream.is_published(request.review_key)


def _cached_ceiling(
    request: ReviewRequest, report: Stage1Report, deps: Deps
) -> Stage2Report | None:
    cache_key = f"{deps.settings.key_prefix}:stage2:{request.review_key}"
    claim_key = _claim_key(deps, request.review_key)
    cached = deps.redis.get(cache_key)
    if cached is not None:
        return Stage2Report.model_validate_json(cached)
    # The claim only guards a judgement in progress; a crash releases it, a kill -9
    # leaves it to expire (at the hard limit, before any redelivery can arrive).
    if not deps.redis.set(claim_key, "1", nx=True, ex=deps.settings.stage2_hard_limit_s):
        return None
    try:
        stage2 = run_ceiling(request, report, deps.judge)
        deps.redis.set(cache_key, stage2.model_dump_json(), ex=deps.settings.dedup_ttl_s)
    finally:
        deps.redis.delete(claim_key)
    return stage2


def _claim_key(deps: Deps, review_key: str) -> str:
    """Held while one worker runs the review's Ceiling; expires at the Stage 2 hard limit."""
    return f"{deps.settings.key_prefix}:claim:{review_key}"


def _identity(raw: str) -> str:
    """The review key when the body names one, else a digest: what tries are counted by.

    Internal hops (router, stage2) carry requests stage1 already validated; one that
    does not decode came from elsewhere and ends, bounded, as a poison entry.
    """
    text = _as_text(raw)
    dag, node, attempt = identity_of(text)
    return f"{dag}:{node}:{attempt}" if dag and node and attempt else digest(text)


def _as_text(raw: object) -> str:
    """``raw`` itself when text; else its JSON (a producer may send any JSON value)."""
    return raw if isinstance(raw, str) else json.dumps(raw, default=repr)


def _guarded(
    stage: Queue,
    identity: str,
    raw: str,
    deps: Deps,
    work: Callable[[bool], Outcome],
    *,
    check_published: bool = False,
    busy: Callable[[], bool] | None = None,
) -> Outcome:
    """Count the try; retry unexpected faults a bounded number of times, then dead-letter.

    With ``check_published`` the same round trip asks whether ``identity`` (as a review
    key) is already published, and ``work`` gets the answer; else it gets False. A
    delivery past the limit while ``busy()`` (a live worker holds the work) waits
    instead: its poison entry would take the stream slot of that worker's result.
    """
    published = False
    if check_published:
        tries, published = deps.tries.bump_and_check(
            stage.value, identity, deps.stream.dedup_key(identity)
        )
    else:
        tries = deps.tries.bump(stage.value, identity)
    limit = deps.settings.max_task_tries
    if tries > limit and busy is not None and busy():
        deps.tries.unbump(stage.value, identity)
        return _CLAIM_WAIT
    if tries > limit:
        _give_up(
            raw,
            identity,
            f"{stage.value} did not finish in {limit} tries "
            "(its worker died or timed out each time)",
            tries - 1,
            deps,
        )
        return None
    try:
        outcome = work(published)
    except Exception as exc:  # the poison-task boundary: anything else would loop or vanish
        error = f"{type(exc).__name__}: {exc}"[:500]
        log.warning("%s failed on try %d/%d for %s: %s", stage.value, tries, limit, identity, error)
        if tries < limit:
            return RetryLater(min(MAX_RETRY_DELAY_S, 2.0**tries), error)
        _give_up(raw, identity, f"{stage.value} failed {tries} times; last: {error}", tries, deps)
        return None
    if isinstance(outcome, RetryLater) and not outcome.counted:
        deps.tries.unbump(stage.value, identity)
    return outcome


def _give_up(
    raw: str, identity: str, message: str, tries: int, deps: Deps, *, about: str | None = None
) -> None:
    raw = _as_text(raw)
    if deps.stream.is_published(_invalid_key(raw)):
        return  # the same body, resent, was already answered with an invalid-request entry
    dag, node, attempt = identity_of(raw if about is None else about)
    error = ReviewError(
        dag_id=dag,
        node_id=node,
        attempt=attempt,
        code=ErrorCode.POISON,
        message=message,
        tries=tries,
    )
    deps.stream.publish_error(error, review_key=identity, raw=raw, dead_letter=True)


def _publish_invalid(
    raw: str, exc: InvalidRequest, deps: Deps, *, about: str | None = None
) -> None:
    dag, node, attempt = identity_of(raw if about is None else about)
    code = ErrorCode.OVERSIZED if isinstance(exc, OversizedRequest) else ErrorCode.INVALID_REQUEST
    error = ReviewError(
        dag_id=dag,
        node_id=node,
        attempt=attempt,
        code=code,
        field=exc.field or None,
        message=exc.reason,
    )
    deps.stream.publish_error(error, review_key=_invalid_key(raw), raw=raw)


def _invalid_key(raw: str) -> str:
    """The dedup key of the error entry that refuses one request body."""
    return f"invalid:{digest(raw)}"
