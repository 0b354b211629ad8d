"""A person's verdict, recorded exactly once, and the decision recomputed with it.

One script, on the review's keys alone (its DAG's slot on a cluster), checks and writes
what must happen once: no verdict yet for the review key, the item still kept, no other
reviewer's live claim; then it adds the ``human_verdict`` entry and the ``decision`` entry
to the DAG's stream and marks the key decided. Taking the item out of the global index
follows as an idempotent step (listings skip decided items meanwhile). The same form
submitted twice, two reviewers racing, or a reviewer whose claim expired while another
took the item: one verdict reaches the stream, the rest are told who decided.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final

import redis

from schemas.human import (
    AttemptRecord,
    HumanDecision,
    HumanVerdict,
    OutcomeSource,
    ReviewItem,
    VerdictChannel,
    VerdictInput,
)
from workers.errors import EvaluatorError, PublishError
from workers.evaluate.verdict.human import decide_with_human
from workers.human.queue import ReviewQueue
from workers.keys import Keys
from workers.records.attempts import AttemptStore, stage_one_view
from workers.records.outcomes import OutcomeStore, labelled, utc_now
from workers.results.stream import EntryKind

# KEYS: stream, decided, claim, item (one DAG's slot). ARGV: retention ms, decided ttl s,
# review key, reviewer, verdict JSON, decision JSON, verdict kind, decision kind. The
# stream expires a retention window after its newest entry, as on publication.
_RECORD_ONCE: Final = """
local done = redis.call('GET', KEYS[2])
if done then return {'decided', done} end
if redis.call('EXISTS', KEYS[4]) == 0 then return {'missing', ''} end
local holder = redis.call('GET', KEYS[3])
if holder and holder ~= ARGV[4] then return {'held', holder} end
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local minid = tostring(math.max(0, now_ms - tonumber(ARGV[1]))) .. '-0'
local v = redis.call('XADD', KEYS[1], 'MINID', '~', minid, '*',
  'kind', ARGV[7], 'review_key', ARGV[3], 'payload', ARGV[5])
local d = redis.call('XADD', KEYS[1], 'MINID', '~', minid, '*',
  'kind', ARGV[8], 'review_key', ARGV[3], 'payload', ARGV[6])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], v .. ' ' .. ARGV[4], 'EX', tonumber(ARGV[2]))
redis.call('DEL', KEYS[3])
return {'recorded', v .. ' ' .. d}
"""


class RecordStatus(StrEnum):
    """What became of a submitted verdict."""

    RECORDED = "recorded"
    """This verdict is the one on the stream."""
    DECIDED = "decided"
    """A verdict was already recorded (``decided_by`` says whose); this one was not."""
    HELD = "held"
    """Another reviewer holds the item's claim; this verdict was not recorded."""
    MISSING = "missing"
    """No such item waits for a person (never escalated, or expired)."""


@dataclass(frozen=True, slots=True)
class Recorded:
    """The outcome of one submission."""

    status: RecordStatus
    verdict: HumanVerdict | None = None
    decision: HumanDecision | None = None
    entry_ids: tuple[str, ...] = ()
    """The verdict's and the decision's stream entries, when recorded."""
    other: str | None = None
    """Who decided (``decided``) or holds the claim (``held``)."""


class VerdictRefusedError(EvaluatorError):
    """A verdict that was not recorded; ``recorded`` says why."""

    def __init__(self, recorded: Recorded, review_key: str) -> None:
        why = {
            RecordStatus.DECIDED: f"already decided by {recorded.other}",
            RecordStatus.HELD: f"claimed by {recorded.other}",
            RecordStatus.MISSING: "no review of that key waits for a person",
        }.get(recorded.status, recorded.status.value)
        super().__init__(f"{review_key}: {why}")
        self.recorded = recorded


class VerdictDesk:
    """Records verdicts; one per process, thread-safe."""

    def __init__(
        self,
        client: redis.Redis,
        keys: Keys,
        *,
        queue: ReviewQueue,
        attempts: AttemptStore,
        outcomes: OutcomeStore,
        retention_s: int,
        decided_ttl_s: int,
    ) -> None:
        self._redis = client
        self._keys = keys
        self._queue = queue
        self._attempts = attempts
        self._outcomes = outcomes
        self._retention_ms = retention_s * 1000
        self._decided_ttl_s = decided_ttl_s
        self._script = client.register_script(_RECORD_ONCE)

    def record(
        self,
        review_key: str,
        given: VerdictInput,
        *,
        reviewer: str,
        channel: VerdictChannel,
    ) -> Recorded:
        """Record ``given`` for ``review_key`` once, with the recomputed decision."""
        decided = self._queue.decided(review_key)
        if decided is not None:
            return Recorded(RecordStatus.DECIDED, other=decided.reviewer)
        item = self._queue.item(review_key)
        if item is None:
            return Recorded(RecordStatus.MISSING)
        verdict = HumanVerdict(
            dag_id=item.result.dag_id,
            node_id=item.result.node_id,
            attempt=item.result.attempt,
            action=given.action,
            human_score=given.human_score,
            scores=given.scores,
            feedback=given.feedback,
            comment=given.comment,
            reviewer=reviewer,
            channel=channel,
            recorded_at=utc_now(),
            machine_decision=item.result.decision,
        )
        decision = decide_with_human(item.request, item.result, verdict, self._history(item))
        recorded = self._publish(item, verdict, decision)
        if recorded.status is RecordStatus.RECORDED:
            self._remember(item, verdict, decision)
        return recorded

    def _history(self, item: ReviewItem) -> tuple[float, ...]:
        request = item.request
        if request.history:
            return request.history
        known = self._attempts.history(request.dag_id, request.node_id, request.attempt)
        return known or ()

    def _publish(
        self, item: ReviewItem, verdict: HumanVerdict, decision: HumanDecision
    ) -> Recorded:
        key, keys = item.review_key, self._keys
        try:
            status, detail = self._script(
                keys=[
                    keys.results(verdict.dag_id),
                    keys.human_decided(key),
                    keys.human_claim(key),
                    keys.human_item(key),
                ],
                args=[
                    self._retention_ms,
                    self._decided_ttl_s,
                    key,
                    verdict.reviewer,
                    verdict.model_dump_json(),
                    decision.model_dump_json(),
                    EntryKind.HUMAN_VERDICT.value,
                    EntryKind.DECISION.value,
                ],
            )
        except redis.RedisError as exc:
            raise PublishError(f"could not record the verdict on {key}: {exc}") from exc
        outcome, text = RecordStatus(status.decode()), detail.decode()
        if outcome in (RecordStatus.RECORDED, RecordStatus.DECIDED):
            self._queue.forget([key])  # the global index's step (idempotent)
        if outcome is RecordStatus.RECORDED:
            return Recorded(outcome, verdict, decision, tuple(text.split(" ")))
        if outcome is RecordStatus.DECIDED:
            return Recorded(outcome, other=text.partition(" ")[2])
        return Recorded(outcome, other=text or None)

    def _remember(self, item: ReviewItem, verdict: HumanVerdict, decision: HumanDecision) -> None:
        """The attempt's human score for convergence, and the verdict as an outcome."""
        dag, node = verdict.dag_id, verdict.node_id
        record = self._attempts.record_human(
            dag, node, verdict.attempt, decision.basis.score, verdict.action
        ) or AttemptRecord(
            attempt=verdict.attempt,
            skill_id=item.request.skill.id,
            score=item.result.basis.score,
            dimension=item.result.basis.dimension,
            stage1=stage_one_view(item.result, item.request),
        )
        self._outcomes.record(
            labelled(
                OutcomeSource.HUMAN,
                f"human:{verdict.reviewer}",
                record,
                dag_id=dag,
                node_id=node,
                label=verdict.human_score,
                action=verdict.action,
            )
        )
