"""Each node's attempts, remembered by the fleet: scores, the best one, what a human said.

The DAG runtime may omit ``history`` when it asks for attempt N; convergence then reads
the fleet's own record of attempts 1..N-1. Records live in one hash per node, capped to
the newest ``kept`` attempts and expiring with the results stream, so nothing grows
without bound.
"""

from __future__ import annotations

from typing import Final, cast

import redis
from pydantic import ValidationError

from schemas.human import AttemptRecord, StageOneView, VerdictAction
from schemas.request import ReviewRequest
from schemas.result import ReviewResult
from workers.evaluate.escalation.calibration import evidence_of
from workers.keys import Keys
from workers.results.booking import RECORD_ATTEMPT_LUA, AttemptWrite

# KEYS: the node's hash. ARGV: attempt, record JSON, ttl s, records kept, 'nx' to keep
# a record already there.
_RECORD: Final = (
    RECORD_ATTEMPT_LUA
    + "return record_attempt(KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5])\n"
)


def stage_one_view(result: ReviewResult, request: ReviewRequest) -> StageOneView:
    """What the fleet saw and decided, as an outcome's calibration needs it.

    The prior's inputs and Stage 1's evidence are kept as the router read them, so a refit
    fits on the same features the router prices with.
    """
    skill = request.skill
    return StageOneView(
        floor_passed=result.stage1.floor.passed,
        wall_grade=result.stage1.wall.grade,
        failure_probability=result.escalation.failure_probability,
        escalated=result.escalation.escalate,
        decision=result.decision,
        claimed_success_rate=skill.success_rate,
        stage=skill.stage,
        breaker=skill.breaker,
        evidence=evidence_of(request, result.stage1),
    )


def attempt_record(result: ReviewResult, request: ReviewRequest) -> AttemptRecord:
    """The record of a published result: its score and what Stage 1 saw."""
    return AttemptRecord(
        attempt=result.attempt,
        skill_id=request.skill.id,
        score=result.basis.score,
        dimension=result.basis.dimension,
        stage1=stage_one_view(result, request),
    )


class AttemptStore:
    """Reads and writes attempt records; one per process, thread-safe."""

    def __init__(self, client: redis.Redis, keys: Keys, *, kept: int, ttl_s: int) -> None:
        self._redis = client
        self._keys = keys
        self._kept = kept
        self._ttl_s = ttl_s
        self._script = client.register_script(_RECORD)

    def record(self, result: ReviewResult, request: ReviewRequest) -> AttemptRecord:
        """Remember a published result's score and what Stage 1 saw.

        A record already there is kept: a replayed publication must not erase what a
        person has since added to it.
        """
        record = attempt_record(result, request)
        self._write(result.dag_id, result.node_id, record, keep=True)
        return record

    def pending(self, result: ReviewResult, request: ReviewRequest) -> AttemptWrite:
        """What ``record`` writes, for the publish script to write with the entry."""
        return AttemptWrite(
            key=self._keys.attempts(result.dag_id, result.node_id),
            attempt=result.attempt,
            record_json=attempt_record(result, request).model_dump_json(),
            ttl_s=self._ttl_s,
            kept=self._kept,
        )

    def record_human(
        self, dag_id: str, node_id: str, attempt: int, score: float, action: VerdictAction
    ) -> AttemptRecord | None:
        """Add a human verdict's recomputed score to its attempt; None when forgotten."""
        record = self.get(dag_id, node_id, attempt)
        if record is None:
            return None
        updated = record.model_copy(update={"human_score": score, "human_action": action})
        self._write(dag_id, node_id, updated)
        return updated

    def get(self, dag_id: str, node_id: str, attempt: int) -> AttemptRecord | None:
        """One attempt's record, when remembered."""
        raw = self._redis.hget(self._keys.attempts(dag_id, node_id), str(attempt))
        return _parsed(cast(bytes | None, raw))

    def records(
        self, dag_id: str, node_id: str, *, before: int | None = None
    ) -> list[AttemptRecord]:
        """The node's remembered attempts (below ``before`` when given), oldest first."""
        raw = cast(dict[bytes, bytes], self._redis.hgetall(self._keys.attempts(dag_id, node_id)))
        found = [r for r in map(_parsed, raw.values()) if r is not None]
        if before is not None:
            found = [r for r in found if r.attempt < before]
        return sorted(found, key=lambda r: r.attempt)

    def history(self, dag_id: str, node_id: str, attempt: int) -> tuple[float, ...] | None:
        """The scores of attempts 1..attempt-1, oldest first; None unless all are known.

        Convergence numbers attempts by their place in the history, so a history with a
        gap would name the wrong attempt to revert to: it is not used at all.
        """
        records = self.records(dag_id, node_id, before=attempt)
        if [r.attempt for r in records] != list(range(1, attempt)):
            return None
        return tuple(r.effective_score for r in records)

    def _write(
        self, dag_id: str, node_id: str, record: AttemptRecord, *, keep: bool = False
    ) -> None:
        self._script(
            keys=[self._keys.attempts(dag_id, node_id)],
            args=[
                record.attempt,
                record.model_dump_json(),
                self._ttl_s,
                self._kept,
                "nx" if keep else "",
            ],
        )


def with_fleet_history(request: ReviewRequest, store: AttemptStore) -> ReviewRequest:
    """``request`` with the fleet's record of earlier attempts when it sent no history.

    A request that supplies ``history`` wins; a first attempt has none to add.
    """
    if request.history or request.attempt == 1:
        return request
    history = store.history(request.dag_id, request.node_id, request.attempt)
    if not history:
        return request
    return request.model_copy(update={"history": history})


def _parsed(raw: bytes | None) -> AttemptRecord | None:
    if raw is None:
        return None
    try:
        return AttemptRecord.model_validate_json(raw)
    except ValidationError:
        return None  # an older record shape: forgotten rather than fatal
