"""Labelled outcomes for learning: what humans, downstream consumers and Stage 2 said.

Every label is kept twice, per skill and per evaluator (each a capped list, newest
first, expiring when untouched), so calibration can ask "how often was this skill's
output bad" and "how often does this evaluator agree with the others" without a scan.
Each list is written by a script of its own, with its once-mark in its own slot (on a
Redis Cluster the two lists and the indexes of names live in different slots), all in one
round trip (``workers.results.batch``); every step is idempotent, so a replay after a
worker died between them completes the record without adding a label twice.
``windags-eval outcomes export`` writes them out as JSONL.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Final, cast

import redis
from pydantic import ValidationError

from schemas.human import AttemptRecord, LabelledOutcome, OutcomeSource, VerdictAction
from schemas.quality import CEILING_DIMENSIONS
from schemas.result import CeilingStatus, ReviewResult
from workers.keys import Keys
from workers.results.batch import Batch

# KEYS: one list, its once-mark (in the list's slot; declared even when not asked for).
# ARGV: outcome JSON, kept, ttl s, '1' to add once. Returns whether the label was added.
_PUSH: Final = """
if ARGV[4] == '1' and not redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[3]) then
  return 0
end
redis.call('LPUSH', KEYS[1], ARGV[1])
redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[2]) - 1)
redis.call('EXPIRE', KEYS[1], ARGV[3])
return 1
"""


def utc_now() -> str:
    """Now, ISO 8601 in UTC: the timestamps of verdicts and outcomes."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class OutcomeStore:
    """Appends and reads labelled outcomes; one per process, thread-safe."""

    def __init__(self, client: redis.Redis, keys: Keys, *, kept: int, ttl_s: int) -> None:
        self._redis = client
        self._keys = keys
        self._kept = kept
        self._ttl_s = ttl_s
        self._push = client.register_script(_PUSH)

    def batch(self) -> Batch:
        """An empty batch on this store's Redis, for ``record_in``."""
        return Batch(self._redis)

    def record(self, outcome: LabelledOutcome, *, once: bool = False) -> bool:
        """Append ``outcome`` to its skill's and its evaluator's lists, in one round trip.

        ``once``: only if this attempt has no label from this source and evaluator yet, so
        a publication's bookkeeping, replayed after a worker died, adds each label once.
        Whether it was appended.
        """
        batch = self.batch()
        self.record_in(batch, outcome, once=once)
        return any(batch.send()[:2])

    def record_in(self, batch: Batch, outcome: LabelledOutcome, *, once: bool = False) -> None:
        """``record``'s writes, added to ``batch``: first the two lists, then the indexes.

        One script per list, each in its list's slot with its once-mark, then the indexes
        of names (one slot each); every step is idempotent.
        """
        keys, label = self._keys, f"{outcome.source.value}:{outcome.evaluator}"
        at = (outcome.dag_id, outcome.node_id, outcome.attempt, label)
        lists = (
            (
                keys.outcomes_of_skill(outcome.skill_id),
                keys.skill_outcome_once(outcome.skill_id, *at),
            ),
            (
                keys.outcomes_of_evaluator(outcome.evaluator),
                keys.evaluator_outcome_once(outcome.evaluator, *at),
            ),
        )
        args: list[str | int] = [
            outcome.model_dump_json(),
            self._kept,
            self._ttl_s,
            "1" if once else "",
        ]
        for listed, mark in lists:
            batch.script(self._push, [listed, mark], args)
        for index, name in (
            (keys.outcome_skills, outcome.skill_id),
            (keys.outcome_evaluators, outcome.evaluator),
        ):
            batch.pipe.sadd(index, name)
            batch.pipe.expire(index, self._ttl_s)

    def skills(self) -> list[str]:
        """Skills with outcomes, sorted."""
        return sorted(_texts(self._redis.smembers(self._keys.outcome_skills)))

    def evaluators(self) -> list[str]:
        """Evaluators with outcomes, sorted."""
        return sorted(_texts(self._redis.smembers(self._keys.outcome_evaluators)))

    def export(
        self, *, skill: str | None = None, evaluator: str | None = None
    ) -> Iterator[LabelledOutcome]:
        """Outcomes oldest first: of one skill, of one evaluator, or all (by skill)."""
        if evaluator is not None:
            keys = [self._keys.outcomes_of_evaluator(evaluator)]
        else:
            names = [skill] if skill is not None else self.skills()
            keys = [self._keys.outcomes_of_skill(name) for name in names]
        for key in keys:
            for raw in reversed(cast(list[bytes], self._redis.lrange(key, 0, -1))):
                try:
                    outcome = LabelledOutcome.model_validate_json(raw)
                except ValidationError:
                    continue  # an older shape: skipped, never fatal to an export
                if skill is None or outcome.skill_id == skill:
                    yield outcome


def labelled(
    source: OutcomeSource,
    evaluator: str,
    record: AttemptRecord,
    *,
    dag_id: str,
    node_id: str,
    label: float,
    action: VerdictAction | None = None,
) -> LabelledOutcome:
    """One label on the attempt ``record`` remembers (skill and Stage 1's view from it)."""
    return LabelledOutcome(
        source=source,
        evaluator=evaluator,
        skill_id=record.skill_id,
        dag_id=dag_id,
        node_id=node_id,
        attempt=record.attempt,
        label=label,
        action=action,
        stage1=record.stage1,
        recorded_at=utc_now(),
    )


def stage2_label(result: ReviewResult) -> tuple[str, float] | None:
    """Stage 2's evaluator name and label (its weakest Ceiling dimension), when it scored.

    An indeterminate Ceiling (the judge failed) is no label at all.
    """
    stage2 = result.stage2
    if stage2 is None or stage2.status is not CeilingStatus.SCORED:
        return None
    ceiling = [v for d, v in result.quality.scored().items() if d in CEILING_DIMENSIONS]
    return (f"stage2:{stage2.model}", min(ceiling)) if ceiling else None


def _texts(values: object) -> list[str]:
    return [v.decode() if isinstance(v, bytes) else str(v) for v in cast(set[bytes], values)]
