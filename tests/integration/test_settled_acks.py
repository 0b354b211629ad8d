"""A task's last write carries its delivery's ack (``workers/fleet/transport/settle.py``).

Real kombu consumers on real Redis, each test with its own queues and unacked keys. The
hop a task ends with and the removal of its ``unacked`` record are one transaction, and
the publish script removes the record with the entry it adds: Celery's ack that follows
sends nothing, and a consumer killed between the write and the ack has nothing to run
again. A busy queue is taken from without a wait in between, and a script cache that
Redis lost (a restart) costs one empty poll.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from kombu.connection import Connection
from kombu.entity import Queue as KombuQueue
from kombu.transport import redis as kombu_redis

from schemas.request import ReviewRequest
from tests.infrastructure import drop_prefix
from tests.integration.support import kombu_keys, sample
from workers.fleet.transport import settle
from workers.fleet.transport.redis_transport import TAKE_MAX, Transport
from workers.keys import Keys
from workers.results.booking import AttemptWrite, Booking, Settlement
from workers.results.stream import ResultStream
from workers.review import Reviewer
from workers.settings import Settings

pytestmark = pytest.mark.integration

#: A consumer whose "task" sends its hop settled, then SIGKILLs itself before the ack.
DYING_AFTER_HOP = textwrap.dedent(
    """
    import json, os, signal, sys
    from kombu.connection import Connection
    from kombu.entity import Queue
    from workers.fleet.transport import settle
    from workers.fleet.transport.redis_transport import Transport

    url, source, target, options = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])

    def on_message(body, message):
        with settle.running(message.delivery_tag):
            with settle.arm():
                producer.publish(body, routing_key=target, declare=[Queue(target)])
        os.kill(os.getpid(), signal.SIGKILL)  # before Celery's late ack

    with Connection(url, transport=Transport, transport_options=options) as connection:
        producer = connection.Producer()
        with connection.Consumer(Queue(source), callbacks=[on_message], prefetch_count=1):
            while True:
                try:
                    connection.drain_events(timeout=1)
                except TimeoutError:
                    continue
    """
)


@pytest.fixture()
def keys(redis_db: redis.Redis) -> Iterator[dict[str, str]]:
    yield from kombu_keys(redis_db, "settle", target="-next", reserved=":reserved")


def _options(keys: dict[str, str], **extra: Any) -> dict[str, Any]:
    names = {k: keys[k] for k in ("unacked_key", "unacked_index_key", "unacked_mutex_key")}
    reserved = {keys["queue"]: keys["reserved"]}
    return {
        "priority_steps": [0],
        "task_queues": (),
        "reserved_keys": reserved,
        **names,
        **extra,
    }


def _publish(url: str, keys: dict[str, str], bodies: list[dict[str, str]]) -> None:
    with Connection(url, transport=Transport, transport_options=_options(keys)) as connection:
        producer = connection.Producer()
        for body in bodies:
            producer.publish(body, routing_key=keys["queue"], declare=[KombuQueue(keys["queue"])])


def _held(redis_db: redis.Redis, keys: dict[str, str]) -> tuple[int, int, int]:
    """The records of taken, unacked deliveries: the hash, its index, the reserved set."""
    return (
        redis_db.hlen(keys["unacked_key"]),
        redis_db.zcard(keys["unacked_index_key"]),
        redis_db.zcard(keys["reserved"]),
    )


def test_a_hop_sent_settled_takes_the_ack_with_it(
    redis_url: str, redis_db: redis.Redis, keys: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    bodies = [{"review": f"s:n{i}:1"} for i in range(3)]
    _publish(redis_url, keys, bodies)
    redis_acks: list[Any] = []
    parent_ack = kombu_redis.QoS.ack

    def ack_in_redis(qos: Any, tag: Any) -> None:
        redis_acks.append(tag)
        parent_ack(qos, tag)

    monkeypatch.setattr(kombu_redis.QoS, "ack", ack_in_redis)
    seen: list[tuple[int, int, int]] = []

    with Connection(redis_url, transport=Transport, transport_options=_options(keys)) as conn:
        producer = conn.Producer()

        def on_message(body: dict[str, str], message: Any) -> None:
            with settle.running(message.delivery_tag):
                assert _held(redis_db, keys) != (0, 0, 0)  # taken: recorded, in flight
                with settle.arm():
                    producer.publish(
                        body, routing_key=keys["target"], declare=[KombuQueue(keys["target"])]
                    )
                seen.append(_held(redis_db, keys))  # gone with the hop, before the ack
            message.ack()

        queue = KombuQueue(keys["queue"])
        with conn.Consumer(queue, callbacks=[on_message], prefetch_count=1):
            while len(seen) < len(bodies):
                conn.drain_events(timeout=10)
        delivered = conn.default_channel.qos._delivered

    assert seen == [(0, 0, 0)] * len(bodies)
    assert redis_acks == []  # Celery's ack of each stayed in memory
    assert not delivered
    hops = [json.loads(raw)["body"] for raw in redis_db.lrange(keys["target"], 0, -1)]
    assert len(hops) == len(bodies)
    assert redis_db.llen(keys["queue"]) == 0


def test_a_write_outside_a_settled_task_leaves_the_ack_to_celery(
    redis_url: str, redis_db: redis.Redis, keys: dict[str, str]
) -> None:
    """A hop not armed (a retry, another producer) is a plain ``LPUSH``: the ack follows."""
    _publish(redis_url, keys, [{"review": "s:n0:1"}])
    with Connection(redis_url, transport=Transport, transport_options=_options(keys)) as conn:
        producer = conn.Producer()
        seen: list[tuple[int, int, int]] = []

        def on_message(body: dict[str, str], message: Any) -> None:
            with settle.running(message.delivery_tag):
                producer.publish(
                    body, routing_key=keys["target"], declare=[KombuQueue(keys["target"])]
                )
                seen.append(_held(redis_db, keys))
            message.ack()

        with conn.Consumer(KombuQueue(keys["queue"]), callbacks=[on_message], prefetch_count=1):
            conn.drain_events(timeout=10)
    assert seen == [(1, 1, 1)]
    assert _held(redis_db, keys) == (0, 0, 0)
    assert redis_db.llen(keys["target"]) == 1


def test_a_consumer_killed_after_its_settled_hop_runs_nothing_twice(
    redis_url: str, redis_db: redis.Redis, keys: dict[str, str]
) -> None:
    """Killed between the hop and the ack: before, a restore ran the task again."""
    _publish(redis_url, keys, [{"review": "s:n0:1"}])
    options = _options(keys)
    command = [sys.executable, "-c", DYING_AFTER_HOP, redis_url, keys["queue"], keys["target"]]
    died = subprocess.run([*command, json.dumps(options)], timeout=60, capture_output=True)
    assert died.returncode == -9, died.stderr[-2000:]

    assert _held(redis_db, keys) == (0, 0, 0)
    assert redis_db.llen(keys["target"]) == 1
    with Connection(redis_url, transport=Transport, transport_options=options) as conn:
        time.sleep(1.1)
        conn.default_channel.qos.restore_visible(num=100)  # would bring back a held one
    assert redis_db.llen(keys["queue"]) == 0


def test_a_busy_queue_is_taken_without_waits_and_survives_a_lost_script_cache(
    redis_url: str, redis_db: redis.Redis, keys: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    bodies = [{"n": str(i)} for i in range(6 * TAKE_MAX)]
    _publish(redis_url, keys, bodies)
    received: list[dict[str, str]] = []
    calls = {"after a wait": 0, "takes": 0}
    channel = Transport.Channel
    take, taken = channel._take_at, channel._taken

    def counted_take(chan: Any, *args: Any) -> Any:
        calls["after a wait"] += 1
        return take(chan, *args)

    def counted_taken(chan: Any, *args: Any) -> Any:
        calls["takes"] += 1
        return taken(chan, *args)

    monkeypatch.setattr(channel, "_take_at", counted_take)
    monkeypatch.setattr(channel, "_taken", counted_taken)

    def on_message(body: dict[str, str], message: Any) -> None:
        received.append(body)
        message.ack()
        if len(received) == 2 * TAKE_MAX + 1:
            redis_db.script_flush()  # what a Redis restart does to the take script

    with Connection(redis_url, transport=Transport, transport_options=_options(keys)) as conn:
        queue = KombuQueue(keys["queue"])
        with conn.Consumer(queue, callbacks=[on_message], prefetch_count=TAKE_MAX):
            while len(received) < len(bodies):
                conn.drain_events(timeout=10)

    assert received == bodies
    assert _held(redis_db, keys) == (0, 0, 0)
    # Every take but the first and the one after the flush went without a wait before it.
    assert calls["takes"] >= len(bodies) // TAKE_MAX
    assert calls["after a wait"] <= 3 < calls["takes"], calls


def test_the_publish_script_acks_only_with_the_entry_it_adds(
    redis_db: redis.Redis, keys: dict[str, str]
) -> None:
    prefix = f"settle-{uuid.uuid4().hex[:8]}"
    names = Keys(prefix)
    stream = ResultStream(redis_db, names, retention_s=3600, dedup_ttl_s=3600)
    tag = "tag-1"
    settles = Settlement(keys["unacked_key"], keys["unacked_index_key"], keys["reserved"], tag)

    def plant() -> None:
        redis_db.hset(keys["unacked_key"], tag, '[{}, "", "q"]')
        redis_db.zadd(keys["unacked_index_key"], {tag: 1.0})
        redis_db.zadd(keys["reserved"], {tag: 1.0})

    def booking(attempt: int) -> Booking:
        write = AttemptWrite(names.attempts("d", "n"), attempt, "{}", 60, 8)
        return Booking(write, names.booked(f"d:n:{attempt}"), 60, settles)

    body = sample("good_python.json", dag_id="d", node_id="n")
    request = ReviewRequest.model_validate_json(json.dumps(body))
    result = Reviewer(Settings())(request)
    try:
        plant()
        first = stream.publish_result(result, booking=booking(1))
        assert first.added
        # A retention window after its newest entry the stream goes (MINID trims no more).
        assert 3_540_000 < redis_db.pttl(names.results("d")) <= 3_600_000
        assert _held(redis_db, keys) == (0, 0, 0)

        plant()  # a later delivery of the same review finds the entry there
        again = stream.publish_result(result, booking=booking(1))
        assert not again.added
        assert _held(redis_db, keys) == (1, 1, 1)  # its ack is Celery's, after it
    finally:
        drop_prefix(redis_db, prefix)
