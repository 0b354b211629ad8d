"""The least Redis work an accepted node needs, whatever the transport: the cost floor.

``bench.redis_cost`` measures what the fleet costs Redis per node. This is the other side
of the comparison: the same node, with the same guarantees, moved by the least sequence
of commands we know, measured by the same counters on the same server in the same run.

The least design is Redis Streams with consumer groups. A stream's pending entries list
records a delivery when it is read, so taking a message needs no script and no copy of
it into a hash, and a blocking read hands the message over in the same round trip that
waited for it. Per node:

- **submit**: ``XADD`` to the Stage 1 stream, pipelined by ``SUBMIT_BATCH`` as the client
  submits;
- **Stage 1**: ``XREADGROUP COUNT 16 BLOCK`` (the reader's prefetch), then per node one
  ``MULTI``: ``XADD`` to the router stream, ``XACK`` and ``XDEL`` of the delivery. The hop
  carries its ack, as the fleet's settled hop does;
- **router**: the same read, then one script per node that publishes once: the dedup key,
  the entry (trimmed by ``MINID``), the attempt record kept to its newest, the
  bookkeeping mark, and ``XACK``/``XDEL`` of the delivery, as the fleet's publish script.

What it leaves out, each of which the fleet pays for and this floor does not: the
delivery's owner (leases), the in-flight count per queue for KEDA, the quarantine's
inspection, Celery's events. The bytes are the fleet's own, kombu's envelope included: a
real message, a real result entry and a real attempt record, read from the fleet's run.
Stage 1 and the router are threads of this process, one connection each. They do no
work, but Stage 1 hops at the pace the fleet's Stage 1 kept in the same round, so the
router finds as many nodes waiting per read as the fleet's router did: reads batch alike.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final, cast

import redis

from workers.client import SUBMIT_BATCH
from workers.keys import Keys

#: Messages one blocking read may take (the fleet's prefetch per worker is of this order).
READ_COUNT: Final = 16
BLOCK_MS: Final = 200
GROUP: Final = "floor"
#: Attempt records kept per node: ``Settings.attempts_kept``'s default.
ATTEMPTS_KEPT: Final = 100

# KEYS: results stream, dedup key, attempts hash, bookkeeping mark, router stream.
# ARGV: retention ms, dedup ttl s, attempt field, attempt record, records' ttl s, records
# kept, mark ttl s, group, delivery id, then the entry's field/value pairs.
PUBLISH_LUA: Final = """
local existing = redis.call('GET', KEYS[2])
if existing then return existing end
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local minid = tostring(math.max(0, now_ms - tonumber(ARGV[1]))) .. '-0'
local id = redis.call('XADD', KEYS[1], 'MINID', '~', minid, '*', unpack(ARGV, 10))
redis.call('SET', KEYS[2], id, 'EX', tonumber(ARGV[2]))
redis.call('HSETNX', KEYS[3], ARGV[3], ARGV[4])
redis.call('EXPIRE', KEYS[3], tonumber(ARGV[5]))
if redis.call('HLEN', KEYS[3]) > tonumber(ARGV[6]) then
  local fields = redis.call('HKEYS', KEYS[3])
  table.sort(fields, function(a, b) return tonumber(a) < tonumber(b) end)
  redis.call('HDEL', KEYS[3], fields[1])
end
redis.call('SET', KEYS[4], '1', 'EX', tonumber(ARGV[7]))
redis.call('XACK', KEYS[5], ARGV[8], ARGV[9])
redis.call('XDEL', KEYS[5], ARGV[9])
return id
"""

_WEEK_S: Final = 7 * 24 * 3600


@dataclass(frozen=True, slots=True)
class Samples:
    """The fleet's own bytes: what the floor moves instead of made-up payloads."""

    message: bytes
    """A submitted message as it sits in the Stage 1 queue (kombu's envelope included)."""
    entry: dict[bytes, bytes]
    """A published result entry's fields."""
    attempt_record: bytes


class Floor:
    """One floor workload: submit, Stage 1 and router, as threads.

    Its two streams live beside the fleet's queues; what it publishes and books has the
    fleet's own keys (``keys``), names of the same length included.
    """

    def __init__(self, url: str, keys: Keys, samples: Samples) -> None:
        self.url = url
        self.samples = samples
        self.keys = keys
        self.stage1 = f"{keys.broker}floor.stage1"
        self.router = f"{keys.broker}floor.router"
        self._runs = 0
        self._pace_s = 0.0

    def run(self, n: int, timeout_s: float, *, pace_s: float = 0.0) -> None:
        """Submit ``n`` nodes and return when each is published and acked.

        Stage 1 hops one node per ``pace_s`` at most: the pace the fleet's Stage 1 kept,
        so the router's reads find as many nodes waiting as the fleet's router did.
        """
        self._runs += 1
        self._pace_s = pace_s
        dag = f"floor-{self._runs}"
        setup = redis.Redis.from_url(self.url)
        try:
            for stream in (self.stage1, self.router):
                try:
                    setup.xgroup_create(stream, GROUP, id="$", mkstream=True)
                except redis.ResponseError as exc:
                    if "BUSYGROUP" not in str(exc):
                        raise
        finally:
            setup.close()
        failures: list[BaseException] = []
        threads = [
            threading.Thread(target=self._guarded, args=(work, n, dag, failures), daemon=True)
            for work in (self._stage1, self._router)
        ]
        for thread in threads:
            thread.start()
        self._submit(n)
        for thread in threads:
            thread.join(timeout_s)
            if thread.is_alive():
                raise RuntimeError(f"floor: {n} nodes not done in {timeout_s:.0f}s")
        if failures:
            raise RuntimeError("floor workload failed") from failures[0]

    @staticmethod
    def _guarded(
        work: Callable[[int, str], None], n: int, dag: str, failures: list[BaseException]
    ) -> None:
        try:
            work(n, dag)
        except BaseException as exc:  # reported by ``run``
            failures.append(exc)

    def _submit(self, n: int) -> None:
        client = redis.Redis.from_url(self.url)
        try:
            for start in range(0, n, SUBMIT_BATCH):
                pipe = client.pipeline(transaction=False)
                for _ in range(min(SUBMIT_BATCH, n - start)):
                    pipe.xadd(self.stage1, {"m": self.samples.message})
                pipe.execute()
        finally:
            client.close()

    def _reads(
        self, client: redis.Redis, stream: str, n: int
    ) -> Iterator[tuple[bytes, dict[bytes, bytes]]]:
        """Every delivery of ``n`` from ``stream``, read as a consumer of the group."""
        done = 0
        while done < n:
            replies = client.xreadgroup(GROUP, "c", {stream: ">"}, count=READ_COUNT, block=BLOCK_MS)
            for _, entries in cast("list[Any]", replies or []):
                for entry_id, fields in entries:
                    done += 1
                    yield entry_id, fields

    def _stage1(self, n: int, dag: str) -> None:
        client = redis.Redis.from_url(self.url)
        next_at = time.monotonic()
        try:
            for entry_id, fields in self._reads(client, self.stage1, n):
                next_at += self._pace_s
                time.sleep(max(0.0, next_at - time.monotonic()))
                pipe = client.pipeline(transaction=True)
                pipe.xadd(self.router, {b"m": fields[b"m"]})
                pipe.xack(self.stage1, GROUP, entry_id)
                pipe.xdel(self.stage1, entry_id)
                pipe.execute()
        finally:
            client.close()

    def _router(self, n: int, dag: str) -> None:
        client = redis.Redis.from_url(self.url)
        publish = client.register_script(PUBLISH_LUA)
        pairs = [part for item in self.samples.entry.items() for part in item]
        try:
            for i, (entry_id, _) in enumerate(self._reads(client, self.router, n)):
                review = f"{dag}:n{i}:1"
                publish(
                    keys=[
                        self.keys.results(dag),
                        self.keys.published(review),
                        self.keys.attempts(dag, f"n{i}"),
                        self.keys.booked(review),
                        self.router,
                    ],
                    args=[
                        _WEEK_S * 1000,
                        _WEEK_S + 24 * 3600,
                        1,
                        self.samples.attempt_record,
                        _WEEK_S,
                        ATTEMPTS_KEPT,
                        _WEEK_S,
                        GROUP,
                        entry_id,
                        *pairs,
                    ],
                )
        finally:
            client.close()
