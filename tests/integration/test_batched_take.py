"""One take pops as many messages as the prefetch leaves room for, each recorded unacked.

A gevent worker's consumer shares its thread with its tasks: one message per turn left it
far below its concurrency, so the take script pops up to ``TAKE_MAX``. The guarantee must
not change: a consumer killed with a batch in hand leaves every message of it in
``unacked``, and a restore brings all of them back.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from kombu.connection import Connection
from kombu.entity import Queue as KombuQueue

from tests.integration.support import kombu_keys
from workers.fleet.transport.redis_transport import TAKE_MAX, Transport

pytestmark = pytest.mark.integration

BATCH = 5

#: A consumer with room for ``BATCH`` messages that SIGKILLs itself at the first delivery.
DYING = textwrap.dedent(
    """
    import json, os, signal, sys
    from kombu.connection import Connection
    from kombu.entity import Queue
    from workers.fleet.transport import redis_transport

    class Dying(redis_transport.Transport):
        def _deliver(self, message, queue):
            os.kill(os.getpid(), signal.SIGKILL)

    url, queue = sys.argv[1], sys.argv[2]
    options, prefetch = json.loads(sys.argv[3]), int(sys.argv[4])
    with Connection(url, transport=Dying, transport_options=options) as connection:
        with connection.Consumer(Queue(queue), accept=["json"], prefetch_count=prefetch):
            while True:
                try:
                    connection.drain_events(timeout=1)
                except TimeoutError:
                    continue
    """
)


@pytest.fixture()
def keys(redis_db: redis.Redis) -> Iterator[dict[str, str]]:
    yield from kombu_keys(redis_db, "take")


def _options(keys: dict[str, str], **extra: Any) -> dict[str, Any]:
    return {"priority_steps": [0], **{k: v for k, v in keys.items() if k != "queue"}, **extra}


def _publish(url: str, keys: dict[str, str], bodies: list[dict[str, str]]) -> None:
    with Connection(url, transport=Transport, transport_options=_options(keys)) as connection:
        producer = connection.Producer()
        for body in bodies:
            producer.publish(body, routing_key=keys["queue"], declare=[KombuQueue(keys["queue"])])


def _drain(
    url: str, keys: dict[str, str], count: int, prefetch: int, *, restore: bool = False
) -> list[dict[str, str]]:
    received: list[dict[str, str]] = []

    def on_message(body: dict[str, str], message: Any) -> None:
        received.append(body)
        message.ack()

    options = _options(keys, visibility_timeout=1)
    with Connection(url, transport=Transport, transport_options=options) as connection:
        if restore:
            time.sleep(1.1)  # older than the visibility timeout
            connection.default_channel.qos.restore_visible(num=100)
        queue = KombuQueue(keys["queue"])
        with connection.Consumer(queue, callbacks=[on_message], prefetch_count=prefetch):
            while len(received) < count:
                connection.drain_events(timeout=10)
    return received


def test_a_consumer_killed_holding_a_batch_leaves_every_message_of_it_unacked(
    redis_url: str, redis_db: redis.Redis, keys: dict[str, str]
) -> None:
    bodies = [{"review": f"wd:n{i}:1"} for i in range(BATCH + 2)]
    _publish(redis_url, keys, bodies)
    command = [sys.executable, "-c", DYING, redis_url, keys["queue"]]
    command += [json.dumps(_options(keys)), str(BATCH)]
    died = subprocess.run(command, timeout=60, capture_output=True, check=False)
    assert died.returncode == -9, died.stderr[-2000:]

    # One take popped as many as the prefetch allowed; all of them are recorded.
    assert redis_db.llen(keys["queue"]) == 2
    assert redis_db.hlen(keys["unacked_key"]) == BATCH
    assert redis_db.zcard(keys["unacked_index_key"]) == BATCH
    received = _drain(redis_url, keys, len(bodies), BATCH, restore=True)
    assert sorted(b["review"] for b in received) == sorted(b["review"] for b in bodies)
    assert redis_db.hlen(keys["unacked_key"]) == 0


def test_batched_takes_keep_the_order_and_acks_leave_nothing_behind(
    redis_url: str, redis_db: redis.Redis, keys: dict[str, str]
) -> None:
    bodies = [{"n": str(i)} for i in range(3 * TAKE_MAX)]
    _publish(redis_url, keys, bodies)

    assert _drain(redis_url, keys, len(bodies), 2 * TAKE_MAX) == bodies
    assert redis_db.llen(keys["queue"]) == 0
    assert redis_db.hlen(keys["unacked_key"]) == 0
    assert redis_db.zcard(keys["unacked_index_key"]) == 0


def _when_blocked(redis_db: redis.Redis, then: Any) -> threading.Thread:
    """Run ``then`` once some client waits in ``BLMOVE`` (a thread; join it)."""

    def waiter() -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            clients = redis_db.client_list()
            if any(c["cmd"] == "blmove" and "b" in c["flags"] for c in clients):
                break
            time.sleep(0.02)
        then()

    thread = threading.Thread(target=waiter, daemon=True)
    thread.start()
    return thread


def test_a_woken_wait_takes_in_its_own_round_trip_and_a_lost_script_costs_one_more(
    redis_url: str, redis_db: redis.Redis, keys: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The take goes behind the wait in one write; Redis runs it as the wait ends."""
    separate: list[tuple[Any, ...]] = []
    take = Transport.Channel._take_at

    def counted(chan: Any, *args: Any) -> Any:
        separate.append(args)
        return take(chan, *args)

    monkeypatch.setattr(Transport.Channel, "_take_at", counted)
    received: list[dict[str, str]] = []

    def on_message(body: dict[str, str], message: Any) -> None:
        received.append(body)
        message.ack()

    options = _options(keys)
    with Connection(redis_url, transport=Transport, transport_options=options) as connection:
        queue = KombuQueue(keys["queue"])
        with connection.Consumer(queue, callbacks=[on_message], prefetch_count=4):
            for n, lose_script in enumerate((False, True)):
                if lose_script:
                    redis_db.script_flush()  # what a Redis restart does to the take script
                body = {"n": str(n)}
                publisher = _when_blocked(redis_db, lambda b=body: _publish(redis_url, keys, [b]))
                while len(received) <= n:
                    connection.drain_events(timeout=10)
                publisher.join()
                assert received[n] == body
                assert len(separate) == int(lose_script), separate
    assert redis_db.llen(keys["queue"]) == 0
    assert redis_db.hlen(keys["unacked_key"]) == 0
    assert redis_db.zcard(keys["unacked_index_key"]) == 0
