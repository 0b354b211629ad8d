"""Waits begun together share one transaction for their first look-ups (``runtime.lookups``)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
import redis
import redis.asyncio as aredis

from bench import common
from tests.infrastructure import require_redis_server
from workers.errors import ClientClosedError
from workers.local.redis_server import PrivateRedis
from workers.runtime.lookups import BatchedLookups, Looked


@pytest.fixture(scope="module")
def server() -> Iterator[PrivateRedis]:
    require_redis_server()
    with common.private_redis() as started:
        yield started


def _transactions(url: str) -> int:
    client = redis.Redis.from_url(url)
    try:
        stats = client.info("commandstats")
    finally:
        client.close()
    return int(stats.get("cmdstat_exec", {}).get("calls", 0))


def _asked(url: str, asks: list[tuple[str, str]]) -> tuple[list[Looked], int]:
    """Every ask begun in one turn of the loop; their answers and the EXECs they took."""

    async def run() -> tuple[list[Looked], int]:
        commands = aredis.Redis.from_url(url)
        lookups = BatchedLookups(commands)
        before = _transactions(url)
        try:
            found = await asyncio.gather(*(lookups.ask(s, k) for s, k in asks))
        finally:
            await lookups.aclose(ClientClosedError("closed"))
            await commands.aclose()
        return list(found), _transactions(url) - before

    return asyncio.run(run())


def test_fifty_asks_made_together_take_one_transaction(server: PrivateRedis) -> None:
    db = redis.Redis.from_url(server.url)
    try:
        db.delete("busy", "quiet", "k3")
        db.xadd("busy", {"n": "1"})
        last = db.xadd("busy", {"n": "2"})
        db.set("k3", "1712-0")
    finally:
        db.close()
    asks = [("busy" if i % 2 else "quiet", f"k{i}") for i in range(50)]

    found, transactions = _asked(server.url, asks)

    assert transactions == 1
    for (stream, key), looked in zip(asks, found, strict=True):
        if stream == "busy":
            assert [entry_id for entry_id, _ in looked.tail] == [last]
        else:
            assert looked.tail == []
        assert looked.value == (b"1712-0" if key == "k3" else None)


def test_a_failed_transaction_reaches_every_asker(server: PrivateRedis) -> None:
    db = redis.Redis.from_url(server.url)
    try:
        db.set("not-a-stream", "x")  # XREVRANGE on it is refused inside the EXEC
    finally:
        db.close()

    async def run() -> list[BaseException | Looked]:
        commands = aredis.Redis.from_url(server.url)
        lookups = BatchedLookups(commands)
        try:
            asks = [lookups.ask("not-a-stream", f"k{i}") for i in range(3)]
            return list(await asyncio.gather(*asks, return_exceptions=True))
        finally:
            await lookups.aclose(ClientClosedError("closed"))
            await commands.aclose()

    answers = asyncio.run(run())
    assert len(answers) == 3
    assert all(isinstance(a, redis.ResponseError) for a in answers), answers


def test_closing_fails_the_asks_still_open(server: PrivateRedis) -> None:
    async def run() -> None:
        commands = aredis.Redis.from_url(server.url)
        lookups = BatchedLookups(commands)
        try:
            ask = asyncio.ensure_future(lookups.ask("quiet", "k0"))
            await asyncio.sleep(0)  # the ask is made; its transaction has not started
            await lookups.aclose(ClientClosedError("closed while asking"))
            with pytest.raises(ClientClosedError, match="closed while asking"):
                await ask
        finally:
            await commands.aclose()

    asyncio.run(run())
