"""Our own delivery counter per review and stage, and the claim a try may take with it.

Redis keeps none, so a task that kills its worker every time would otherwise be
redelivered forever.

A stage whose work must run once at a time (Stage 2's judgement: ``workers.fleet.
judge_claim``) takes its claim in the same round trip as the count, and asks there
whether that work is already kept: a try that has to judge pays one round trip before
the model call, not three.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import redis

from workers.keys import Keys


@dataclass(frozen=True, slots=True)
class Claim:
    """A key a live worker holds while it does a job's work, and where the work is kept.

    The claim is a ``SET NX`` with ``ttl_s``: a crash releases it, a kill -9 leaves it to
    expire. ``kept`` names the finished work (Stage 2's report): a delivery that finds it
    needs no claim. All three keys are the review's (one Redis Cluster slot).
    """

    key: str
    ttl_s: int
    kept: str


class ClaimState(StrEnum):
    """What the count's round trip found of the job's claim."""

    TAKEN = "taken"
    """This try took it: it must release it (``release``)."""
    HELD = "held"
    """Another live worker holds it (or a killed one, until it expires)."""


@dataclass(frozen=True, slots=True)
class TryCount:
    """One delivery's place in its review's tries, and what was asked with the count."""

    tries: int
    """Executions of this stage so far, this one included."""
    published: bool = False
    """Whether the review is already on its stream (asked in the same round trip)."""
    claim: ClaimState | None = None
    """The job's claim, when it has one (``Claim``)."""
    kept: bool = False
    """Whether the claimed work is already kept (``Claim.kept`` exists)."""


class TryCounter:
    """Counts executions of one stage of one review across redeliveries and retries."""

    def __init__(self, client: redis.Redis, keys: Keys, *, ttl_s: int) -> None:
        self._redis = client
        self._keys = keys
        self._ttl_s = ttl_s

    def bump(
        self,
        stage: str,
        identity: str,
        *,
        check_published: bool = False,
        claim: Claim | None = None,
    ) -> TryCount:
        """Count one more execution; also ask for the dedup key, and take ``claim``."""
        counter = self._keys.tries(stage, identity)
        pipe = self._redis.pipeline()
        pipe.incr(counter)
        pipe.expire(counter, self._ttl_s)
        count, _, *asked = self._asked(pipe, identity, check_published, claim).execute()
        return _read(int(count), asked, check_published, claim)

    def peek(
        self,
        stage: str,
        identity: str,
        *,
        check_published: bool = False,
        claim: Claim | None = None,
    ) -> TryCount:
        """Executions counted so far, counting none; ``bump``'s answer without the bump."""
        pipe = self._redis.pipeline()
        pipe.get(self._keys.tries(stage, identity))
        count, *asked = self._asked(pipe, identity, check_published, claim).execute()
        return _read(int(count or 0), asked, check_published, claim)

    def claim(self, claim: Claim) -> TryCount:
        """Take ``claim`` alone, for a try counted without it: its ``claim`` and ``kept``."""
        asked = self._asked(self._redis.pipeline(), "", False, claim).execute()
        return _read(0, asked, False, claim)

    def count(self, stage: str, identity: str) -> int:
        """Executions counted so far (0 when none, or expired)."""
        return int(self._redis.get(self._keys.tries(stage, identity)) or 0)

    def unbump(self, stage: str, identity: str) -> None:
        """Take back one ``bump``: that execution only waited, it did not run the work.

        Never below zero, and never recreates a counter that expired meanwhile.
        """
        self._redis.eval(_UNBUMP, 1, self._keys.tries(stage, identity))

    def release(self, claim: Claim, *, expires_at: float) -> None:
        """Give ``claim`` up; through a Redis outage, until it would have expired anyway.

        ``expires_at``: ``time.monotonic()`` when its TTL runs out. Left to expire, a claim
        whose release met Redis restarting held the review's redeliveries (handed back when
        the connection died) in waits until then.
        """
        while True:
            try:
                self._redis.delete(claim.key)
                return
            except (redis.ConnectionError, redis.TimeoutError):
                if time.monotonic() + RELEASE_EVERY_S >= expires_at:
                    raise
                time.sleep(RELEASE_EVERY_S)

    def _asked(self, pipe: Any, identity: str, published: bool, claim: Claim | None) -> Any:
        if published:
            pipe.exists(self._keys.published(identity))
        if claim is not None:
            pipe.set(claim.key, "1", nx=True, ex=claim.ttl_s)
            pipe.exists(claim.kept)
        return pipe


#: How often a release that met Redis down tries again.
RELEASE_EVERY_S = 0.5


def _read(tries: int, asked: list[Any], published: bool, claim: Claim | None) -> TryCount:
    """The count's answer from the replies of what ``_asked`` added to its round trip."""
    found = bool(asked.pop(0)) if published else False
    if claim is None:
        return TryCount(tries, found)
    taken, kept = asked
    state = ClaimState.TAKEN if taken else ClaimState.HELD
    return TryCount(tries, found, state, bool(kept))


# KEYS: counter. Decrement it when it exists and is positive.
_UNBUMP = """
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n > 0 then return redis.call('DECR', KEYS[1]) end
return n
"""


def digest(raw: str | bytes) -> str:
    """A stable identity for a request body that has no readable review key."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    return "sha256-" + hashlib.sha256(data).hexdigest()[:32]
