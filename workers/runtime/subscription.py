"""A consumer of a DAG's results in a group, from asyncio: what ``Subscription`` does, awaited.

At least once, nothing stranded: the consumer first drains its own pending entries (left
from before a crash), then reads new ones; every so often it claims entries another
consumer of the group has held too long (``XAUTOCLAIM``). An outage is waited out with a
logged backoff, then the consumer re-reads its own pending entries; a group that vanished
with a Redis restarted without persistence is created again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import cast

import redis
import redis.asyncio as aredis

from workers.results.stream import Payload, entry_fields, parse_entry
from workers.results.subscriber import FIRST_PAUSE_S, LAST_PAUSE_S

_Entry = tuple[bytes, dict[bytes, bytes]]
_OUTAGES = (redis.ConnectionError, redis.TimeoutError, OSError)
log = logging.getLogger("windags.subscriber")


@dataclass(frozen=True, slots=True)
class AsyncDelivery:
    """One stream entry handed to a consumer; ``await ack()`` once handled."""

    entry_id: str
    review_key: str
    payload: Payload
    """A ``ReviewResult`` or ``ReviewError``; for escalated attempts later a ``HumanVerdict``
    and the ``HumanDecision`` recomputed with it (``kind`` tells them apart)."""
    traceparent: str | None
    _subscription: AsyncSubscription = field(repr=False)

    async def ack(self) -> None:
        """Mark the entry handled for the group."""
        await self._subscription.ack(self.entry_id)


class AsyncSubscription:
    """A consumer in a group on one DAG's results stream; an async iterator of deliveries."""

    def __init__(
        self,
        client: aredis.Redis,
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
        self._has_group = False

    async def ack(self, entry_id: str) -> None:
        """Acknowledge one entry."""
        await self._redis.xack(self.stream, self.group, entry_id)

    async def poll(self) -> list[AsyncDelivery]:
        """One round: own pending entries first, then stale ones of others, then new ones."""
        if not self._has_group:
            await self._ensure_group()
        try:
            return await self._poll()
        except redis.ResponseError as exc:
            if "NOGROUP" not in str(exc):
                raise
            log.warning("group %s of %s is gone; creating it", self.group, self.stream)
            await self._ensure_group()
            self._drained_own = False
            return await self._poll()

    async def __aiter__(self) -> AsyncIterator[AsyncDelivery]:
        pause = FIRST_PAUSE_S
        while True:
            try:
                batch = await self.poll()
            except _OUTAGES as exc:
                log.warning("%s unreachable (%s); again in %.1f s", self.stream, exc, pause)
                await asyncio.sleep(pause)
                pause = min(LAST_PAUSE_S, pause * 2)
                self._drained_own = False  # entries delivered before may not be acked
                continue
            pause = FIRST_PAUSE_S
            for delivery in batch:
                yield delivery

    async def _ensure_group(self) -> None:
        try:
            await self._redis.xgroup_create(self.stream, self.group, id="0", mkstream=True)
        except redis.ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise
        self._has_group = True

    async def _poll(self) -> list[AsyncDelivery]:
        if not self._drained_own:
            own = await self._read("0")
            if own:
                return own
            self._drained_own = True
        claimed = await self._claim()
        if claimed:
            return claimed
        return await self._read(">")

    async def _read(self, start: str) -> list[AsyncDelivery]:
        reply = await self._redis.xreadgroup(
            self.group,
            self.consumer,
            {self.stream: start},
            count=self._batch,
            block=None if start == "0" else self._block_ms,
        )
        streams = cast(list[tuple[bytes, list[_Entry]]], reply or [])
        entries = [item for _, items in streams for item in items]
        return [self._delivery(entry_id, fields) for entry_id, fields in entries if fields]

    async def _claim(self) -> list[AsyncDelivery]:
        reply = await self._redis.xautoclaim(
            self.stream,
            self.group,
            self.consumer,
            min_idle_time=self._claim_idle_ms,
            start_id="0-0",
            count=self._batch,
        )
        entries = cast(list[_Entry], reply[1] if reply else [])
        return [self._delivery(entry_id, fields) for entry_id, fields in entries if fields]

    def _delivery(self, entry_id: bytes | str, fields: dict[bytes, bytes]) -> AsyncDelivery:
        text = entry_fields(fields)
        return AsyncDelivery(
            entry_id=entry_id.decode() if isinstance(entry_id, bytes) else entry_id,
            review_key=text.get("review_key", ""),
            payload=parse_entry(fields),
            traceparent=text.get("traceparent"),
            _subscription=self,
        )
