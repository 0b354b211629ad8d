"""Each take names its owner; the sweep restores what dead owners held, and nothing else.

Issue 22, item 3: a worker killed with SIGKILL left its deliveries in ``unacked`` for the
visibility timeout (900 s by default). The take writes the owner as a fourth element of
the record (``TAKE_LUA``), the owner's lease lives while its process does
(``workers/fleet/transport/leases.py``), and the restore sweep hands back the records of
owners whose lease is gone (``workers/fleet/transport/owner_sweep.py``). The whole story
with real worker processes: ``tests/faults/test_restart_restores.py``.
"""

from __future__ import annotations

import json
import math
import time
import uuid
from collections.abc import Iterator
from typing import Any, cast

import pytest
import redis
from kombu.connection import Connection
from kombu.entity import Queue as KombuQueue

from workers.fleet.app import celery_config
from workers.fleet.queues import Queue
from workers.fleet.transport import leases
from workers.fleet.transport.inspection import UnackedRecord, unacked_record
from workers.fleet.transport.leases import LEASE_TTL_S
from workers.fleet.transport.owner_sweep import GRACE_S, owned_records, restore_dead_owners
from workers.fleet.transport.redis_transport import Transport
from workers.keys import Keys
from workers.settings import Settings

pytestmark = pytest.mark.integration

QUEUE = Queue.STAGE2.value


@pytest.fixture()
def prefix(redis_db: redis.Redis) -> Iterator[str]:
    name = f"owners-{uuid.uuid4().hex[:8]}"
    yield name
    found = list(redis_db.scan_iter(match=f"{name}:*"))
    if found:
        redis_db.delete(*found)


def _connection(redis_url: str, prefix: str) -> Connection:
    """A connection with the fleet's own transport options under ``prefix``."""
    settings = Settings(redis_url=redis_url, key_prefix=prefix)
    options: dict[str, Any] = celery_config(settings)["broker_transport_options"]
    options.update(accepted_tasks=[], task_queues=[])
    return Connection(redis_url, transport=Transport, transport_options=options)


def _take_one(connection: Connection, body: dict[str, str] | None = None) -> Any:
    """Publish ``body`` (unless None) and take one message; it stays unacked."""
    if body is not None:
        connection.Producer().publish(body, routing_key=QUEUE, declare=[KombuQueue(QUEUE)])
    channel = connection.default_channel
    channel.basic_qos(prefetch_count=1)
    got: list[Any] = []
    with connection.Consumer([KombuQueue(QUEUE)], channel=channel, callbacks=[_append(got)]):
        while not got:
            connection.drain_events(timeout=10)
    return got[0]


def _append(into: list[Any]) -> Any:
    return lambda _body, message: into.append(message)


def test_a_take_names_its_owner_whose_lease_is_set(
    redis_url: str, redis_db: redis.Redis, prefix: str
) -> None:
    keys = Keys(prefix)
    with _connection(redis_url, prefix) as connection:
        message = _take_one(connection, {"n": "1"})
        tag = message.delivery_tag
        record = unacked_record(redis_db.hget(keys.unacked, tag) or b"")
        owner = leases.LEASES.owner
        ttl = int(redis_db.ttl(keys.lease(owner)))
        message.ack()
        after = redis_db.hexists(keys.unacked, tag)

    # Four elements: kombu's triple and the owner, in the same script as the take.
    assert isinstance(record, UnackedRecord)
    assert (record.routing_key, record.owner) == (QUEUE, owner)
    assert 0 < ttl <= LEASE_TTL_S
    assert not after


def _plant(db: redis.Redis, keys: Keys, tag: str, record: bytes, *, age_s: float) -> None:
    """An unacked record as a take (ours, an old one, kombu's) leaves it, ``age_s`` old."""
    db.hset(keys.unacked, tag, record)
    db.zadd(keys.unacked_index, {tag: time.time() - age_s})
    db.zadd(keys.reserved(QUEUE), {tag: time.time() - age_s})


def _message(tag: str) -> bytes:
    return json.dumps(
        {"body": "e30=", "headers": {}, "properties": {"delivery_tag": tag, "delivery_info": {}}},
        separators=(",", ":"),
    ).encode()


def _ours(tag: str, owner: str | None) -> bytes:
    """The record ``TAKE_LUA`` writes: the message verbatim, then ``,"",<queue>(,<owner>)]``."""
    tail = f',"",{json.dumps(QUEUE)}' + ("" if owner is None else f",{json.dumps(owner)}")
    return b"[" + _message(tag) + tail.encode() + b"]"


def test_the_sweep_restores_dead_owners_records_and_leaves_the_rest(
    redis_url: str, redis_db: redis.Redis, prefix: str
) -> None:
    keys = Keys(prefix)
    old = GRACE_S + 5
    redis_db.set(keys.lease("alive-owner:1:aa"), "1", ex=LEASE_TTL_S)
    planted = {
        "alive": (_ours("alive", "alive-owner:1:aa"), old),
        "dead": (_ours("dead", "dead-owner:2:bb"), old),
        "dead-but-young": (_ours("dead-but-young", "dead-owner:2:bb"), 1.0),
        "no-owner": (_ours("no-owner", None), old),  # an old take's record
        "kombus": (json.dumps([json.loads(_message("kombus")), "", QUEUE]).encode(), old),
    }
    for tag, (record, age_s) in planted.items():
        _plant(redis_db, keys, tag, record, age_s=age_s)

    with _connection(redis_url, prefix) as connection:
        qos = connection.default_channel.qos
        restored = restore_dead_owners(qos)
        # One sweep per interval across the fleet: a second one at once reads nothing.
        again = owned_records(connection.default_channel)

    assert restored == 1
    assert again is None
    queued = [json.loads(raw) for raw in redis_db.lrange(keys.queue(QUEUE), 0, -1)]
    assert [m["properties"]["delivery_tag"] for m in queued] == ["dead"]
    assert queued[0]["headers"]["redelivered"] is True
    left = {tag.decode() for tag in cast(list[bytes], redis_db.hkeys(keys.unacked))}
    assert left == {"alive", "dead-but-young", "no-owner", "kombus"}
    in_flight = cast(list[bytes], redis_db.zrange(keys.reserved(QUEUE), 0, -1))
    assert {tag.decode() for tag in in_flight} == left


def test_a_late_ack_after_a_lapsed_lease_leaves_the_newer_delivery_alone(
    redis_url: str, redis_db: redis.Redis, prefix: str
) -> None:
    """A frozen owner's delivery was restored and taken again: its ack must not remove that."""
    keys = Keys(prefix)
    with _connection(redis_url, prefix) as first, _connection(redis_url, prefix) as second:
        stale = _take_one(first, {"n": "1"})
        tag = stale.delivery_tag
        # The owner froze past its TTL: its lease is gone, and it knows it may have lapsed.
        redis_db.delete(keys.lease(leases.LEASES.owner))
        lease = first.default_channel._lease
        lease.valid_until = -math.inf
        restored = restore_dead_owners(second.default_channel.qos, now=time.time() + GRACE_S + 1)
        fresh = _take_one(second)  # the same message, the same tag, a newer record
        assert fresh.delivery_tag == tag
        newer = redis_db.zscore(keys.unacked_index, tag)
        stale.ack()  # the thawed owner's late ack
        kept = redis_db.hexists(keys.unacked, tag), redis_db.zscore(keys.unacked_index, tag)
        in_flight = redis_db.zscore(keys.reserved(QUEUE), tag)
        fresh.ack()
        gone = redis_db.hexists(keys.unacked, tag)

    assert restored == 1
    assert kept == (True, newer)
    assert in_flight is not None
    assert not gone
