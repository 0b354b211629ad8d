"""Many waits' first look-ups in one transaction: where each stream stands, and each mark.

A wait asks two things at once (``waiters``): the stream's last entry id, from which the
reader will read on, and the key that says whether its answer is already on the stream.
A runtime that awaits fifty nodes at once asks fifty times in the same turn of the event
loop; one round trip each cost the loop more than the fleet took to publish the first
verdicts, which then waited behind the submissions. Asks made while a transaction is in
flight go together in the next one, as the publisher's submissions do.

One ``MULTI``/``EXEC`` holds each stream's tail and every key asked with it, so a verdict
published between the two reads cannot fall between them.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import Any

import redis.asyncio as aredis

#: Keys one transaction reads at most; a bigger burst goes in several.
MAX_ASKS = 500


@dataclass(frozen=True, slots=True)
class Looked:
    """What one ask found."""

    tail: list[tuple[bytes, Any]]
    """``XREVRANGE stream + - COUNT 1``: the newest entry, or none."""
    value: bytes | None
    """The key's value: None when it is not set."""


_Ask = tuple[str, str, asyncio.Future[Looked]]


class BatchedLookups:
    """Answers ``ask(stream, key)`` with the stream's tail and the key, asks batched."""

    def __init__(self, commands: aredis.Redis) -> None:
        self._commands = commands
        self._pending: list[_Ask] = []
        self._flight: list[_Ask] = []
        self._task: asyncio.Task[None] | None = None

    async def ask(self, stream: str, key: str) -> Looked:
        """``stream``'s newest entry and ``key``'s value, read together."""
        future: asyncio.Future[Looked] = asyncio.get_running_loop().create_future()
        self._pending.append((stream, key, future))
        if self._task is None:
            # Runs after the tasks already scheduled this turn: their asks join this one.
            self._task = asyncio.create_task(self._drain(), name="windags-lookups")
        return await future

    async def _drain(self) -> None:
        try:
            while self._pending:
                batch, self._pending = self._pending[:MAX_ASKS], self._pending[MAX_ASKS:]
                live = [ask for ask in batch if not ask[2].done()]  # a caller gave up
                if not live:
                    continue
                self._flight = live
                try:
                    found = await self._read(live)
                except Exception as exc:  # an outage or a refusal: every asker hears it
                    _fail(live, exc)
                    continue
                for (_, _, future), looked in zip(live, found, strict=True):
                    if not future.done():
                        future.set_result(looked)
        finally:
            self._task, self._flight = None, []

    async def _read(self, asks: list[_Ask]) -> list[Looked]:
        streams = list(dict.fromkeys(stream for stream, _, _ in asks))
        pipe = self._commands.pipeline(transaction=True)
        for stream in streams:
            pipe.xrevrange(stream, count=1)
        for _, key, _ in asks:
            pipe.get(key)
        replies = await pipe.execute()
        tails = dict(zip(streams, replies[: len(streams)], strict=True))
        values = replies[len(streams) :]
        return [
            Looked(tails[stream], value) for (stream, _, _), value in zip(asks, values, strict=True)
        ]

    async def aclose(self, error: BaseException) -> None:
        """Stop reading; every ask still open fails with ``error``."""
        _fail(self._pending + self._flight, error)
        self._pending = []
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


def _fail(asks: list[_Ask], error: BaseException) -> None:
    for _, _, future in asks:
        if not future.done():
            future.set_exception(error)
