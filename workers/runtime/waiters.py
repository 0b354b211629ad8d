"""One reader per client: waits on many reviews without a connection or a group per wait.

A caller ``expect``s a review key (or a person's verdict on one) and gets a future. The
reader holds one connection and reads every watched DAG's stream with one plain
``XREAD`` (no consumer group: it takes no entry from the runtime's own groups), from
where each stream stood when its first waiter came, and resolves the futures of the
keys it sees. A stream no one waits on is dropped; with none, the reader sleeps.

Nothing is missed between the look-up and the read: ``expect`` registers the future
first, then asks, in one transaction, for the stream's last id and whether the review is
already there (published reviews answer at once); the reader reads on from that id. The
asks of many waits begun together share that transaction (``lookups``). A
blocked ``XREAD`` does not know a stream added meanwhile, so adding one unblocks it
(``CLIENT UNBLOCK``); the read then starts again with the new stream.

An outage ends every wait within ``outage_bound_s`` with ``BrokerUnavailableError``; the
reader itself goes on trying, and a later ``expect`` finds what was published meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, cast

import redis
import redis.asyncio as aredis

from workers.errors import BrokerUnavailableError, ClientClosedError
from workers.keys import Keys
from workers.results.stream import EntryKind, parse_entry
from workers.runtime.lookups import BatchedLookups
from workers.runtime.verdicts import (
    PERSON_KINDS,
    REVIEW_KINDS,
    PersonDecided,
    ReviewPayload,
    as_review,
    decided_entry_id,
    person_decided,
    text_of,
)

T = TypeVar("T")
_OUTAGES = (redis.ConnectionError, redis.TimeoutError, OSError)
_Entry = tuple[bytes, dict[bytes, bytes]]
#: Entries one read takes from all streams together.
READ_COUNT = 500
FIRST_PAUSE_S = 0.1
LAST_PAUSE_S = 1.0
#: The read's block when the reader cannot be unblocked for a new stream.
SHORT_BLOCK_MS = 20
log = logging.getLogger("windags.client")


@dataclass(eq=False)
class Expectation(Generic[T]):
    """One caller's wait for one key; ``close`` it when done waiting, answered or not."""

    key: str
    stream: str
    future: asyncio.Future[T]
    _release: Callable[[Expectation[T]], None] = field(repr=False)

    def close(self) -> None:
        """Stop waiting: the reader forgets this wait (and the stream, if it was the last)."""
        self._release(self)


class StreamWaiters:
    """The reader task and the waits it answers."""

    def __init__(
        self,
        commands: aredis.Redis,
        reader: aredis.Redis,
        keys: Keys,
        *,
        block_ms: int,
        outage_bound_s: float,
    ) -> None:
        self._commands = commands
        self._lookups = BatchedLookups(commands)
        self._reader = reader
        self._keys = keys
        self._block_ms = block_ms
        self._outage_bound_s = outage_bound_s
        self._reviews: dict[str, set[Expectation[ReviewPayload]]] = {}
        self._people: dict[str, set[Expectation[PersonDecided]]] = {}
        self._verdicts: dict[str, dict[bytes, bytes]] = {}  # a verdict seen, not its decision
        self._cursors: dict[str, str] = {}  # stream -> last id read
        self._watchers: dict[str, int] = {}  # stream -> waits on it
        self._generation = 0  # bumped whenever a stream is added
        self._blocked_on: int | None = None  # the generation the blocked XREAD reads
        self._reader_id: int | None = None
        self._wake: asyncio.Event = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._waking: asyncio.Task[None] | None = None
        self._closed = False

    async def expect_review(self, dag_id: str, review_key: str) -> Expectation[ReviewPayload]:
        """A wait for ``review_key``'s result or error; done at once if already published."""
        stream = self._keys.results(dag_id)
        wait = self._register(self._reviews, stream, review_key)
        try:
            looked = await self._lookups.ask(stream, self._keys.published(review_key, dag_id))
            entry_id = text_of(looked.value)
            if entry_id is not None:
                [payload] = await self._payloads(stream, entry_id, 1)
                _settle(wait.future, as_review(payload))
            self._watch(stream, _tail_id(looked.tail))
        except BaseException:
            wait.close()
            raise
        return wait

    async def expect_person(self, dag_id: str, review_key: str) -> Expectation[PersonDecided]:
        """A wait for a person's verdict on ``review_key`` and the decision that follows it."""
        stream = self._keys.results(dag_id)
        wait = self._register(self._people, stream, review_key)
        try:
            looked = await self._lookups.ask(stream, self._keys.human_decided(review_key))
            entry_id = decided_entry_id(looked.value)
            if entry_id is not None:
                verdict, decision = await self._payloads(stream, entry_id, 2)
                _settle(wait.future, person_decided(verdict, decision))
            self._watch(stream, _tail_id(looked.tail))
        except BaseException:
            wait.close()
            raise
        return wait

    async def _payloads(self, stream: str, first_id: str, count: int) -> list[Any]:
        raw = cast(list[_Entry], await self._commands.xrange(stream, min=first_id, count=count))
        return [parse_entry(fields) for _, fields in raw]

    def _register(
        self, table: dict[str, set[Expectation[T]]], stream: str, key: str
    ) -> Expectation[T]:
        if self._closed:
            raise ClientClosedError("the client is closed")
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()

        def release(wait: Expectation[T]) -> None:
            waits = table.get(key)
            if waits is not None and wait in waits:
                waits.discard(wait)
                if not waits:
                    del table[key]
                self._unwatch(stream)
            if not wait.future.done():
                wait.future.cancel()

        wait = Expectation(key, stream, future, release)
        table.setdefault(key, set()).add(wait)
        self._watchers[stream] = self._watchers.get(stream, 0) + 1
        return wait

    def _watch(self, stream: str, since: str) -> None:
        """Read ``stream`` from ``since`` on, unless it is read already (from further back)."""
        if stream in self._cursors:
            return
        self._cursors[stream] = since
        self._generation += 1
        self._wake.set()
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="windags-stream-reader")
        if self._blocked_on is not None and self._waking is None:
            self._waking = asyncio.create_task(self._unblock(), name="windags-reader-wake")

    def _unwatch(self, stream: str) -> None:
        left = self._watchers.get(stream, 0) - 1
        if left > 0:
            self._watchers[stream] = left
            return
        self._watchers.pop(stream, None)
        self._cursors.pop(stream, None)

    async def _unblock(self) -> None:
        """Unblock an ``XREAD`` that does not read the newest stream; until it is done."""
        try:
            while (
                self._blocked_on is not None
                and self._blocked_on < self._generation
                and self._reader_id  # None: reconnecting; 0: may not be unblocked
            ):
                if await self._commands.client_unblock(self._reader_id):
                    return
                await asyncio.sleep(0.002)  # the XREAD has not reached Redis yet
        except redis.ResponseError:
            self._cannot_unblock()
        except _OUTAGES:
            return  # the reader sees the outage itself
        finally:
            self._waking = None

    async def _run(self) -> None:
        pause = FIRST_PAUSE_S
        outage_since: float | None = None
        loop = asyncio.get_running_loop()
        while not self._closed:
            if not self._cursors:
                self._wake.clear()
                await self._wake.wait()
                continue
            try:
                await self._read_once()
            except _OUTAGES as exc:
                self._reader_id = None
                now = loop.time()
                outage_since = outage_since or now
                if now - outage_since >= self._outage_bound_s:
                    self._fail_all(BrokerUnavailableError(f"results unreadable: {exc}"))
                log.warning("results unreadable (%s); again in %.1f s", exc, pause)
                await asyncio.sleep(pause)
                pause = min(LAST_PAUSE_S, pause * 2)
                continue
            except Exception as exc:  # a bug or a refused command: never a silent hang
                log.exception("results reader failed")
                self._fail_all(exc)
                await asyncio.sleep(LAST_PAUSE_S)
                continue
            outage_since, pause = None, FIRST_PAUSE_S

    def _cannot_unblock(self) -> None:
        """An ACL that refuses ``CLIENT ID``/``UNBLOCK``: read in short blocks instead."""
        log.warning("CLIENT UNBLOCK refused: new streams are read within %d ms", SHORT_BLOCK_MS)
        self._reader_id = 0
        self._block_ms = min(self._block_ms, SHORT_BLOCK_MS)

    async def _read_once(self) -> None:
        if self._reader_id is None:
            try:
                self._reader_id = int(await self._reader.client_id())
            except redis.ResponseError:
                self._cannot_unblock()
        streams: dict[Any, Any] = dict(self._cursors)
        self._blocked_on = self._generation
        try:
            reply = await self._reader.xread(streams, count=READ_COUNT, block=self._block_ms)
        finally:
            self._blocked_on = None
        for name, entries in cast(list[tuple[bytes, list[_Entry]]], reply or []):
            stream = name.decode()
            for _, fields in entries:
                self._dispatch(fields)
            if entries and stream in self._cursors:
                self._cursors[stream] = entries[-1][0].decode()

    def _dispatch(self, fields: dict[bytes, bytes]) -> None:
        key = text_of(fields.get(b"review_key"))
        kind = text_of(fields.get(b"kind"))
        if key is None or kind is None:
            return
        if kind in REVIEW_KINDS and key in self._reviews:
            _answer(self._reviews[key], lambda: as_review(parse_entry(fields)))
        elif kind in PERSON_KINDS and key in self._people:
            if kind == EntryKind.HUMAN_VERDICT:
                self._verdicts[key] = fields
            elif key in self._verdicts:
                verdict = self._verdicts.pop(key)
                _answer(
                    self._people[key],
                    lambda: person_decided(parse_entry(verdict), parse_entry(fields)),
                )

    def _fail_all(self, error: BaseException) -> None:
        for table in (self._reviews, self._people):
            for waits in table.values():
                for wait in waits:
                    if not wait.future.done():
                        wait.future.set_exception(error)

    async def aclose(self) -> None:
        """Stop the reader; every wait still open ends with ``ClientClosedError``."""
        self._closed = True
        closed = ClientClosedError("the client was closed while waiting")
        self._fail_all(closed)
        await self._lookups.aclose(closed)
        for task in (self._task, self._waking):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task


def _answer(waits: set[Expectation[T]], decode: Callable[[], T]) -> None:
    """Resolve ``waits`` with the decoded entry; an entry that does not decode, raised."""
    try:
        value = decode()
    except (ValueError, TypeError) as exc:  # pydantic's ValidationError is a ValueError
        for wait in waits:
            if not wait.future.done():
                wait.future.set_exception(exc)
        return
    for wait in list(waits):
        _settle(wait.future, value)


def _settle(future: asyncio.Future[T], value: T) -> None:
    if not future.done():
        future.set_result(value)


def _tail_id(reply: list[tuple[bytes, Any]]) -> str:
    """The newest entry's id from ``XREVRANGE ... COUNT 1``; ``0-0`` for an empty stream."""
    return reply[0][0].decode() if reply else "0-0"
