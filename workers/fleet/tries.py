"""Our own delivery counter per review and stage.

Redis keeps none, so a task that kills its worker every time would otherwise be
redelivered forever.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import redis

from workers.keys import Keys


@dataclass(frozen=True, slots=True)
class TryCount:
    """One delivery's place in its review's tries, and whether the review is published."""

    tries: int
    """Executions of this stage so far, this one included."""
    published: bool = False
    """Whether the review is already on its stream (asked in the same round trip)."""


class TryCounter:
    """Counts executions of one stage of one review across redeliveries and retries."""

    def __init__(self, client: redis.Redis, keys: Keys, *, ttl_s: int) -> None:
        self._redis = client
        self._keys = keys
        self._ttl_s = ttl_s

    def bump(self, stage: str, identity: str, *, check_published: bool = False) -> TryCount:
        """Count one more execution; with ``check_published``, also ask for the dedup key."""
        counter = self._keys.tries(stage, identity)
        pipe = self._redis.pipeline()
        pipe.incr(counter)
        pipe.expire(counter, self._ttl_s)
        if check_published:
            pipe.exists(self._keys.published(identity))
        count, _, *published = pipe.execute()
        return TryCount(int(count), bool(published and published[0]))

    def peek(self, stage: str, identity: str, *, check_published: bool = False) -> TryCount:
        """Executions counted so far, counting none; ``bump``'s answer without the bump."""
        pipe = self._redis.pipeline()
        pipe.get(self._keys.tries(stage, identity))
        if check_published:
            pipe.exists(self._keys.published(identity))
        count, *published = pipe.execute()
        return TryCount(int(count or 0), bool(published and published[0]))

    def count(self, stage: str, identity: str) -> int:
        """Executions counted so far (0 when none, or expired)."""
        return int(self._redis.get(self._keys.tries(stage, identity)) or 0)

    def unbump(self, stage: str, identity: str) -> None:
        """Take back one ``bump``: that execution only waited, it did not run the work.

        Never below zero, and never recreates a counter that expired meanwhile.
        """
        self._redis.eval(_UNBUMP, 1, self._keys.tries(stage, identity))


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
