"""Reading a DAG's results through a consumer group: at least once, nothing stranded.

A consumer first drains its own pending entries (left from before a crash), then reads
new ones; every so often it claims entries another consumer has held too long
(XAUTOCLAIM), so a dead subscriber's results still get processed by the group.

Iterating waits out a Redis outage (refused, reset, or a Redis that stopped answering:
every read is bounded by the connection's socket timeout) with a logged backoff, then
re-reads its own pending entries; a group that vanished with a Redis restarted without
persistence is created again. ``poll`` itself raises, for callers with their own loop.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import cast

import redis

from workers.results.stream import Payload, entry_fields, parse_entry

_Entry = tuple[bytes, dict[bytes, bytes]]
_OUTAGES = (redis.ConnectionError, redis.TimeoutError)
#: Backoff between reads while Redis is unreachable: doubling from the first to the last.
FIRST_PAUSE_S = 0.2
LAST_PAUSE_S = 5.0
log = logging.getLogger("windags.subscriber")


@dataclass(frozen=True, slots=True)
class Delivery:
    """One stream entry handed to a consumer; ``ack`` it once handled."""

    entry_id: str
    review_key: str
    payload: Payload
    """A ``ReviewResult`` or ``ReviewError``; for escalated attempts later a ``HumanVerdict``
    and the ``HumanDecision`` recomputed with it (``kind`` tells them apart)."""
    traceparent: str | None
    _subscription: Subscription = field(repr=False)

    def ack(self) -> None:
        """Mark the entry handled for the group."""
        self._subscription.ack(self.entry_id)


class Subscription:
    """A consumer in a group on one DAG's results stream."""

    def __init__(
        self,
        client: redis.Redis,
        stream: str,
        *,
        group: str,
        consumer: str,
        claim_idle_ms: int = 30_000,
        block_ms: int = 1000,
        batch: int = 50,
    ) -> None:
        self._redis = client
        self.stream = stream
        self.group = group
        self.consumer = consumer
        self._claim_idle_ms = claim_idle_ms
        self._block_ms = block_ms
        self._batch = batch
        self._drained_own = False
        self._ensure_group()

    def _ensure_group(self) -> None:
        try:
            self._redis.xgroup_create(self.stream, self.group, id="0", mkstream=True)
        except redis.ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    def ack(self, entry_id: str) -> None:
        """Acknowledge one entry."""
        self._redis.xack(self.stream, self.group, entry_id)

    def poll(self) -> list[Delivery]:
        """One round: own pending entries first, then stale ones of others, then new ones."""
        try:
            return self._poll()
        except redis.ResponseError as exc:
            if "NOGROUP" not in str(exc):
                raise
            log.warning(
                "group %s of %s is gone (Redis restarted?); creating it", self.group, self.stream
            )
            self._ensure_group()
            self._drained_own = False
            return self._poll()

    def _poll(self) -> list[Delivery]:
        if not self._drained_own:
            own = self._read("0")
            if own:
                return own
            self._drained_own = True
        claimed = self._claim()
        if claimed:
            return claimed
        return self._read(">")

    def __iter__(self) -> Iterator[Delivery]:
        pause = FIRST_PAUSE_S
        while True:
            try:
                batch = self.poll()
            except _OUTAGES as exc:
                log.warning("%s unreachable (%s); again in %.1f s", self.stream, exc, pause)
                time.sleep(pause)
                pause = min(LAST_PAUSE_S, pause * 2)
                self._drained_own = False  # entries delivered before may not be acked
                continue
            pause = FIRST_PAUSE_S
            yield from batch

    def _read(self, start: str) -> list[Delivery]:
        reply = self._redis.xreadgroup(
            self.group,
            self.consumer,
            {self.stream: start},
            count=self._batch,
            block=None if start == "0" else self._block_ms,
        )
        streams = cast(list[tuple[bytes, list[_Entry]]], reply or [])
        entries = [item for _, items in streams for item in items]
        return [self._delivery(entry_id, fields) for entry_id, fields in entries if fields]

    def _claim(self) -> list[Delivery]:
        reply = self._redis.xautoclaim(
            self.stream,
            self.group,
            self.consumer,
            min_idle_time=self._claim_idle_ms,
            start_id="0-0",
            count=self._batch,
        )
        entries = cast(list[_Entry], reply[1] if reply else [])
        return [self._delivery(entry_id, fields) for entry_id, fields in entries if fields]

    def _delivery(self, entry_id: bytes | str, fields: dict[bytes, bytes]) -> Delivery:
        text = entry_fields(fields)
        return Delivery(
            entry_id=entry_id.decode() if isinstance(entry_id, bytes) else entry_id,
            review_key=text.get("review_key", ""),
            payload=parse_entry(fields),
            traceparent=text.get("traceparent"),
            _subscription=self,
        )

    def lag(self) -> int | None:
        """Entries the group has not yet been delivered (Redis >= 7), for alerting."""
        for info in self._redis.xinfo_groups(self.stream):
            name = info.get("name")
            if (name.decode() if isinstance(name, bytes) else name) == self.group:
                lag = info.get("lag")
                return int(lag) if lag is not None else None
        return None
