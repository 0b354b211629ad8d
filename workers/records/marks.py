"""Which published results have had their bookkeeping done.

Publication adds a result's stream entry in one script; remembering the attempt, its
labels and (for a person) its queue item follows. A worker killed in between leaves the
entry without them, and the redelivery, finding the entry, would add nothing. The mark is
set last, so its absence tells the redelivery to finish the job. When the attempt record
is all there is to do, the publish script writes it and the mark with the entry.
"""

from __future__ import annotations

import redis

from workers.keys import Keys


class BookkeepingMarks:
    """Reads and sets the marks; one per process, thread-safe."""

    def __init__(self, client: redis.Redis, keys: Keys, *, ttl_s: int) -> None:
        self._redis = client
        self._keys = keys
        self._ttl_s = ttl_s

    @property
    def ttl_s(self) -> int:
        """How long a mark lasts: as long as the results stream keeps the entry."""
        return self._ttl_s

    def key(self, review_key: str) -> str:
        """The mark's key, for the publish script to set with the entry."""
        return self._keys.booked(review_key)

    def is_done(self, review_key: str) -> bool:
        """Whether the bookkeeping of ``review_key``'s publication is done."""
        return bool(self._redis.exists(self._keys.booked(review_key)))

    def done(self, review_key: str) -> None:
        """Set the mark, for as long as the results stream keeps the entry."""
        self._redis.set(self._keys.booked(review_key), "1", ex=self._ttl_s)
