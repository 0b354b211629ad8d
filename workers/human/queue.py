"""The human review queue in Redis: enqueued once, claimed with expiry, decided once.

An item is set with ``SET NX`` (in its DAG's slot), then indexed in the global sorted set
by enqueue time (oldest first) and the summaries hash, in a second, idempotent step
(``ZADD NX``, ``HSETNX``): on a Redis Cluster the index lives in another slot than the
item. A result enters the queue once however often it is published; a worker killed
between the steps leaves its bookkeeping unmarked, and the redelivery indexes the item. A
listing drops what expired or was decided, so an index entry added after a verdict (a late
replay) never shows.
A reviewer opening an item claims it (``SET NX EX``); others see it claimed until the
claim is completed by a verdict or expires back into the queue. Items expire with the
results stream: a review whose result is gone from the stream no longer waits.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from enum import StrEnum
from typing import Final, cast

import redis
from pydantic import ValidationError

from schemas.human import HumanReason, ReviewItem, ReviewSummary
from workers.keys import Keys

#: The most waiting items one listing reads, oldest first.
MAX_LISTED = 5000

# KEYS: item, decided (one review's: one slot). ARGV: item JSON, ttl s.
# Returns 'added', 'queued' (kept already, not decided) or 'decided'.
_ENQUEUE: Final = """
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[2]) then return 'added' end
if redis.call('EXISTS', KEYS[2]) == 1 then return 'decided' end
return 'queued'
"""

# KEYS: pending set, summaries (the global index: one slot). ARGV: score (ms), key,
# summary. Idempotent: a replay keeps the first score and summary.
_INDEX: Final = """
redis.call('ZADD', KEYS[1], 'NX', ARGV[1], ARGV[2])
redis.call('HSETNX', KEYS[2], ARGV[2], ARGV[3])
return 1
"""

# KEYS: claim, item, decided. ARGV: reviewer, ttl s. Returns {status, holder, ttl}.
_CLAIM: Final = """
if redis.call('EXISTS', KEYS[3]) == 1 then return {'decided', '', 0} end
if redis.call('EXISTS', KEYS[2]) == 0 then return {'missing', '', 0} end
local holder = redis.call('GET', KEYS[1])
if (not holder) or holder == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
  return {'mine', ARGV[1], tonumber(ARGV[2])}
end
return {'held', holder, redis.call('TTL', KEYS[1])}
"""

# KEYS: claim. ARGV: reviewer. Only the holder releases.
_RELEASE: Final = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class ClaimStatus(StrEnum):
    """What opening an item got the reviewer."""

    MINE = "mine"
    """Claimed (or re-claimed) by this reviewer."""
    HELD = "held"
    """Another reviewer holds it."""
    DECIDED = "decided"
    """A verdict is already recorded."""
    MISSING = "missing"
    """No such item (never queued, or expired)."""


@dataclass(frozen=True, slots=True)
class Claim:
    """A claim attempt's outcome."""

    status: ClaimStatus
    holder: str | None
    ttl_s: int


@dataclass(frozen=True, slots=True)
class QueueLine:
    """One waiting item as the queue page lists it."""

    summary: ReviewSummary
    claimed_by: str | None
    claim_ttl_s: int | None


@dataclass(frozen=True, slots=True)
class Decided:
    """Who recorded an item's verdict, and its stream entry."""

    entry_id: str
    reviewer: str


class ReviewQueue:
    """The deployment's review queue; one per process, thread-safe."""

    def __init__(
        self, client: redis.Redis, keys: Keys, *, item_ttl_s: int, claim_ttl_s: int
    ) -> None:
        self._redis = client
        self._keys = keys
        self._item_ttl_s = item_ttl_s
        self.claim_ttl_s = claim_ttl_s
        self._enqueue = client.register_script(_ENQUEUE)
        self._index = client.register_script(_INDEX)
        self._claim = client.register_script(_CLAIM)
        self._release = client.register_script(_RELEASE)

    def enqueue(self, item: ReviewItem) -> bool:
        """Add ``item`` unless its review key was queued before; whether it was added."""
        key = item.review_key
        status = self._enqueue(
            keys=[self._keys.human_item(key), self._keys.human_decided(key)],
            args=[item.model_dump_json(), self._item_ttl_s],
        )
        status = status.decode() if isinstance(status, bytes) else str(status)
        if status != "decided":
            self._index(
                keys=[self._keys.human_pending, self._keys.human_summaries],
                args=[int(time.time() * 1000), key, ReviewSummary.of(item).model_dump_json()],
            )
        return status == "added"

    def item(self, review_key: str) -> ReviewItem | None:
        """The whole item, while it is kept."""
        raw = cast(bytes | None, self._redis.get(self._keys.human_item(review_key)))
        return None if raw is None else ReviewItem.model_validate_json(raw)

    def pending(
        self,
        *,
        dag_id: str | None = None,
        skill_id: str | None = None,
        reason: HumanReason | None = None,
        limit: int = 200,
    ) -> list[QueueLine]:
        """Waiting items, oldest first, filtered; expired ones are dropped from the index."""
        members = cast(list[bytes], self._redis.zrange(self._keys.human_pending, 0, MAX_LISTED - 1))
        keys = [m.decode() for m in members]
        if not keys:
            return []
        pipe = self._redis.pipeline(transaction=False)
        pipe.hmget(self._keys.human_summaries, keys)
        for key in keys:  # non-transactional: on a cluster, split by node, not refused
            pipe.exists(self._keys.human_item(key))
            pipe.exists(self._keys.human_decided(key))
            pipe.get(self._keys.human_claim(key))
            pipe.ttl(self._keys.human_claim(key))
        replies = pipe.execute()
        lines, gone = [], []
        for n, key in enumerate(keys):
            raw = replies[0][n]
            exists, decided, holder, ttl = replies[1 + 4 * n : 5 + 4 * n]
            summary = _summary(raw) if exists and not decided else None
            if summary is None:
                gone.append(key)
                continue
            if _wanted(summary, dag_id, skill_id, reason):
                name = holder.decode() if holder is not None else None
                lines.append(QueueLine(summary, name, int(ttl) if name else None))
        if gone:
            self.forget(gone)
        return lines[:limit]

    def claim(self, review_key: str, reviewer: str) -> Claim:
        """Claim an item for ``reviewer`` (renewing their own claim)."""
        status, holder, ttl = self._claim(
            keys=[
                self._keys.human_claim(review_key),
                self._keys.human_item(review_key),
                self._keys.human_decided(review_key),
            ],
            args=[reviewer, self.claim_ttl_s],
        )
        name = holder.decode() if isinstance(holder, bytes) else str(holder)
        return Claim(ClaimStatus(status.decode()), name or None, int(ttl))

    def release(self, review_key: str, reviewer: str) -> bool:
        """Give an item back to the queue; only its holder can."""
        return bool(self._release(keys=[self._keys.human_claim(review_key)], args=[reviewer]))

    def decided(self, review_key: str) -> Decided | None:
        """The recorded verdict's entry and reviewer, once there is one."""
        raw = cast(bytes | None, self._redis.get(self._keys.human_decided(review_key)))
        if raw is None:
            return None
        entry_id, _, reviewer = raw.decode().partition(" ")
        return Decided(entry_id, reviewer)

    def forget(self, keys: list[str]) -> None:
        """Take ``keys`` out of the index (idempotent): decided, or expired."""
        pipe = self._redis.pipeline(transaction=False)
        pipe.zrem(self._keys.human_pending, *keys)
        pipe.hdel(self._keys.human_summaries, *keys)
        pipe.execute()


def _summary(raw: bytes | None) -> ReviewSummary | None:
    if raw is None:
        return None
    try:
        return ReviewSummary.model_validate_json(raw)
    except ValidationError:
        return None


def _wanted(
    summary: ReviewSummary, dag_id: str | None, skill_id: str | None, reason: HumanReason | None
) -> bool:
    return (
        (dag_id is None or summary.dag_id == dag_id)
        and (skill_id is None or summary.skill_id == skill_id)
        and (reason is None or reason in summary.reasons)
    )
