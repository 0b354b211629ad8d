"""What a queue has in flight: the reserved set KEDA adds to the waiting list.

The take records each delivery in its queue's reserved set (``Keys.reserved``) in the
script that records it as unacked; an ack, a restore and a quarantine remove it. So the
set's size is the queue's share of ``unacked``, which KEDA's redis trigger reads (ZCARD)
beside the list's length (``deploy/k8s/components/keda``).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from kombu.connection import Connection
from kombu.entity import Queue as KombuQueue

from workers.fleet.app import celery_config
from workers.fleet.queues import Queue
from workers.fleet.transport.quarantine import QuarantineStream
from workers.fleet.transport.redis_transport import Transport
from workers.keys import Keys
from workers.settings import Settings

pytestmark = pytest.mark.integration


@pytest.fixture()
def prefix(redis_db: redis.Redis) -> Iterator[str]:
    name = f"inflight-{uuid.uuid4().hex[:8]}"
    yield name
    found = list(redis_db.scan_iter(match=f"{name}:*"))
    if found:
        redis_db.delete(*found)


def _options(redis_url: str, prefix: str, **extra: Any) -> dict[str, Any]:
    """The fleet's own transport options (``celery_config``) under ``prefix``."""
    settings = Settings(redis_url=redis_url, key_prefix=prefix)
    options: dict[str, Any] = celery_config(settings)["broker_transport_options"]
    return {**options, **extra}


def _publish(connection: Connection, bodies: list[dict[str, str]]) -> None:
    producer = connection.Producer()
    for body in bodies:
        producer.publish(body, routing_key=Queue.STAGE2.value, declare=[KombuQueue("stage2")])


def test_deliveries_are_counted_in_flight_until_acked(
    redis_url: str, redis_db: redis.Redis, prefix: str
) -> None:
    keys = Keys(prefix)
    held: list[Any] = []
    options = _options(redis_url, prefix, accepted_tasks=[], task_queues=[])
    with Connection(redis_url, transport=Transport, transport_options=options) as connection:
        _publish(connection, [{"n": str(i)} for i in range(5)])
        channel = connection.default_channel
        channel.basic_qos(prefetch_count=3)
        consumer = connection.Consumer([KombuQueue("stage2")], channel=channel)
        consumer.register_callback(lambda _body, message: held.append(message))
        with consumer:
            while len(held) < 3:
                connection.drain_events(timeout=10)
            in_flight = int(redis_db.zcard(keys.reserved("stage2")))
            unacked = int(redis_db.hlen(keys.unacked))
            waiting = int(redis_db.llen(keys.queue("stage2")))
            for message in held:
                message.ack()
            after_acks = int(redis_db.zcard(keys.reserved("stage2")))

    assert (in_flight, unacked, waiting) == (3, 3, 2)
    assert after_acks == 0
    assert redis_db.zcard(keys.reserved("stage1")) == 0


def test_a_restored_delivery_leaves_the_reserved_set(
    redis_url: str, redis_db: redis.Redis, prefix: str
) -> None:
    """A worker gone without acking: the sweep puts the message back, waiting, not in flight."""
    keys = Keys(prefix)
    options = _options(redis_url, prefix, accepted_tasks=[], task_queues=[], visibility_timeout=0)
    with Connection(redis_url, transport=Transport, transport_options=options) as connection:
        _publish(connection, [{"n": "1"}])
        channel = connection.default_channel
        channel.basic_qos(prefetch_count=1)
        got: list[Any] = []
        with connection.Consumer(
            [KombuQueue("stage2")], channel=channel, callbacks=[lambda b, m: got.append(m)]
        ):
            connection.drain_events(timeout=10)
        assert redis_db.zcard(keys.reserved("stage2")) == 1
        # Its worker is gone: another channel's sweep finds the record overdue.
        with Connection(redis_url, transport=Transport, transport_options=options) as other:
            other.default_channel.qos.restore_visible(num=100)

    assert redis_db.zcard(keys.reserved("stage2")) == 0
    assert redis_db.llen(keys.queue("stage2")) == 1


def test_a_sweep_drops_reserved_tags_whose_record_is_gone(
    redis_url: str, redis_db: redis.Redis, prefix: str
) -> None:
    """A tag left without its ``unacked`` record is never counted in flight for long."""
    keys = Keys(prefix)
    redis_db.zadd(keys.reserved("router"), {"stray-tag": 1.0})
    options = _options(redis_url, prefix, accepted_tasks=[], task_queues=[])
    with Connection(redis_url, transport=Transport, transport_options=options) as connection:
        connection.default_channel.qos.restore_visible(num=100)

    assert redis_db.zcard(keys.reserved("router")) == 0


# The take reads the delivery tag without decoding the message (``TAKE_LUA``); the
# channel checks it: bytes that only look like a kombu message are quarantined with the
# record the take made, in one script, never delivered, nothing left in flight.


def _as_kombu_writes_it(
    connection: Connection, redis_db: redis.Redis, keys: Keys
) -> dict[str, Any]:
    """A message as kombu writes it, taken back off its list."""
    connection.Producer().publish(
        {"n": "1"},
        routing_key=Queue.STAGE2.value,
        declare=[KombuQueue(Queue.STAGE2.value)],
        serializer="json",
    )
    raw = redis_db.rpop(keys.queue(Queue.STAGE2.value))
    assert isinstance(raw, bytes)
    message: dict[str, Any] = json.loads(raw)
    return message


def _consume_all(connection: Connection) -> list[Any]:
    got: list[Any] = []
    channel = connection.default_channel
    channel.basic_qos(prefetch_count=4)
    with connection.Consumer(
        [KombuQueue(Queue.STAGE2.value)], channel=channel, callbacks=[lambda _b, m: got.append(m)]
    ):
        for _ in range(3):
            try:
                connection.drain_events(timeout=0.5)
            except TimeoutError:
                pass
    for message in got:
        message.ack()
    return got


@pytest.mark.parametrize("kind", ["decoy_tag_after_properties", "not_json_with_a_tag"])
def test_what_only_looks_like_a_kombu_message_is_quarantined_with_its_record(
    redis_url: str, redis_db: redis.Redis, prefix: str, kind: str
) -> None:
    keys = Keys(prefix)
    with Connection(
        redis_url,
        transport=Transport,
        transport_options=_options(redis_url, prefix, accepted_tasks=[], task_queues=[]),
    ) as connection:
        message = _as_kombu_writes_it(connection, redis_db, keys)
        if kind == "decoy_tag_after_properties":
            # Valid, but the last "delivery_tag" in the text is not properties'.
            raw = json.dumps({**message, "extra": {"delivery_tag": "decoy"}}).encode()
        else:
            raw = b'not json, "delivery_tag": "looks-like-one"'
        redis_db.lpush(keys.queue(Queue.STAGE2.value), raw)
        delivered = _consume_all(connection)

    entries = QuarantineStream(keys.quarantine, 3600).read(redis_db)
    assert delivered == []
    assert [(e.raw, e.queue) for e in entries] == [(raw, Queue.STAGE2.value)]
    assert entries[0].tag in {"decoy", "looks-like-one"}
    if kind == "decoy_tag_after_properties":
        assert "taken as 'decoy'" in entries[0].reason
    assert redis_db.hlen(keys.unacked) == 0 and redis_db.zcard(keys.unacked_index) == 0
    assert (
        redis_db.zcard(keys.reserved(Queue.STAGE2.value)) == 0
        and redis_db.llen(keys.queue(Queue.STAGE2.value)) == 0
    )


def test_a_tag_written_compactly_or_escaped_is_still_read(
    redis_url: str, redis_db: redis.Redis, prefix: str
) -> None:
    """Another producer's JSON: no spaces, or a tag with an escape (read by cjson then)."""
    keys = Keys(prefix)
    with Connection(
        redis_url,
        transport=Transport,
        transport_options=_options(redis_url, prefix, accepted_tasks=[], task_queues=[]),
    ) as connection:
        compact = _as_kombu_writes_it(connection, redis_db, keys)
        escaped = _as_kombu_writes_it(connection, redis_db, keys)
        escaped["properties"]["delivery_tag"] = 'tag-with-"quotes"'
        for message in (compact, escaped):
            redis_db.lpush(
                keys.queue(Queue.STAGE2.value), json.dumps(message, separators=(",", ":"))
            )
        delivered = _consume_all(connection)

    assert sorted(m.delivery_tag for m in delivered) == sorted(
        [compact["properties"]["delivery_tag"], 'tag-with-"quotes"']
    )
    assert QuarantineStream(keys.quarantine, 3600).read(redis_db) == []
    assert (
        redis_db.hlen(keys.unacked) == 0 and redis_db.zcard(keys.reserved(Queue.STAGE2.value)) == 0
    )
