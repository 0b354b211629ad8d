"""Our own delivery counter per review and stage.

Redis keeps none, so a task that kills its worker every time would otherwise be
redelivered forever.
"""

from __future__ import annotations

import hashlib

import redis


class TryCounter:
    """Counts executions of one stage of one review across redeliveries and retries."""

    def __init__(self, client: redis.Redis, key_prefix: str, *, ttl_s: int) -> None:
        self._redis = client
        self._prefix = key_prefix
        self._ttl_s = ttl_s

    def key(self, stage: str, identity: str) -> str:
        """The counter of ``identity`` (a review key, or a digest of an unreadable body)."""
        return f"{self._prefix}:tries:{stage}:{identity}"

    def bump(self, stage: str, identity: str) -> int:
        """Count one more execution; returns the count including this one."""
        key = self.key(stage, identity)
        pipe = self._redis.pipeline()
        pipe.incr(key)
        pipe.expire(key, self._ttl_s)
        count, _ = pipe.execute()
        return int(count)

    def bump_and_check(self, stage: str, identity: str, key: str) -> tuple[int, bool]:
        """``bump``, and whether ``key`` exists, in one round trip: (count, exists)."""
        counter = self.key(stage, identity)
        pipe = self._redis.pipeline()
        pipe.incr(counter)
        pipe.expire(counter, self._ttl_s)
        pipe.exists(key)
        count, _, exists = pipe.execute()
        return int(count), bool(exists)

    def unbump(self, stage: str, identity: str) -> None:
        """Take back one ``bump``: that execution only waited, it did not run the work.

        Never below zero, and never recreates a counter that expired meanwhile.
        """
        self._redis.eval(_UNBUMP, 1, self.key(stage, identity))


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
