"""The broker transport: a worker killed as Redis hands it a message loses nothing.

Each test runs real kombu consumers as processes against real Redis, with its own
queue and its own unacked keys, so the fleet tests sharing the database are untouched.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from kombu.connection import Connection
from kombu.entity import Queue as KombuQueue

from tests.infrastructure import wait_until
from tests.integration.support import kombu_keys
from workers.fleet.app import celery_config
from workers.fleet.transport.redis_transport import Transport
from workers.settings import Settings

pytestmark = pytest.mark.integration


@pytest.fixture()
def keys(redis_db: redis.Redis) -> Iterator[dict[str, str]]:
    yield from kombu_keys(redis_db, "transport")


def _options(keys: dict[str, str], **extra: Any) -> dict[str, Any]:
    names = {name: value for name, value in keys.items() if name != "queue"}
    return {"priority_steps": [0], **names, **extra}


def _publish(url: str, keys: dict[str, str], body: dict[str, str]) -> None:
    with Connection(url, transport=Transport, transport_options=_options(keys)) as connection:
        connection.Producer().publish(
            body, routing_key=keys["queue"], declare=[KombuQueue(keys["queue"])]
        )


def _consume_and_die(url: str, keys: dict[str, str], which: str) -> int:
    """Run a consumer that SIGKILLs itself on delivery; its exit code."""
    command = [
        sys.executable,
        "-m",
        "tests.integration.dying_consumer",
        url,
        keys["queue"],
        which,
        json.dumps(_options(keys)),
    ]
    return subprocess.run(command, timeout=60, capture_output=True, check=False).returncode


def _drain(
    url: str, keys: dict[str, str], queues: list[str], count: int, *, restore: bool = False
) -> list[dict[str, str]]:
    """A healthy consumer of our transport: ``count`` bodies from ``queues``, each acked.

    With ``restore`` it first returns overdue unacked messages to their queue, as a
    worker does on its own every few seconds (visibility timeout 1 s here).
    """
    options = _options(keys, visibility_timeout=1)
    received: list[dict[str, str]] = []

    def on_message(body: dict[str, str], message: Any) -> None:
        received.append(body)
        message.ack()

    with Connection(url, transport=Transport, transport_options=options) as connection:
        if restore:
            time.sleep(1.1)  # older than the visibility timeout
            connection.default_channel.qos.restore_visible(num=100)
        with connection.Consumer([KombuQueue(q) for q in queues], callbacks=[on_message]):
            while len(received) < count:
                connection.drain_events(timeout=10)
    return received


def test_a_consumer_killed_mid_delivery_leaves_the_message_unacked(
    redis_url: str, redis_db: redis.Redis, keys: dict[str, str]
) -> None:
    body = {"review": "wd:n1:1"}
    _publish(redis_url, keys, body)

    assert _consume_and_die(redis_url, keys, "ours") == -9

    assert redis_db.llen(keys["queue"]) == 0
    assert redis_db.hlen(keys["unacked_key"]) == 1
    assert _drain(redis_url, keys, [keys["queue"]], 1, restore=True) == [body]
    assert redis_db.hlen(keys["unacked_key"]) == 0, "the ack clears what the take recorded"


def test_kombus_own_transport_loses_that_message(
    redis_url: str, redis_db: redis.Redis, keys: dict[str, str]
) -> None:
    """Why ``workers.fleet.transport`` exists. When this fails, kombu closed the window itself."""
    _publish(redis_url, keys, {"review": "wd:n1:1"})

    assert _consume_and_die(redis_url, keys, "kombu") == -9

    assert redis_db.llen(keys["queue"]) == 0
    assert redis_db.hlen(keys["unacked_key"]) == 0


def test_messages_arrive_in_order_and_acks_leave_nothing_behind(
    redis_url: str, redis_db: redis.Redis, keys: dict[str, str]
) -> None:
    bodies = [{"n": str(i)} for i in range(20)]
    for body in bodies:
        _publish(redis_url, keys, body)

    received = _drain(redis_url, keys, [keys["queue"]], len(bodies))

    assert received == bodies
    assert redis_db.llen(keys["queue"]) == 0
    assert redis_db.hlen(keys["unacked_key"]) == 0
    assert redis_db.zcard(keys["unacked_index_key"]) == 0


def test_a_consumer_of_two_queues_still_receives_from_both(
    redis_url: str, redis_db: redis.Redis, keys: dict[str, str]
) -> None:
    """Two queues take kombu's BRPOP path; it must keep working."""
    other = {**keys, "queue": keys["queue"] + "-b"}
    _publish(redis_url, keys, {"from": "a"})
    _publish(redis_url, other, {"from": "b"})
    try:
        received = _drain(redis_url, keys, [keys["queue"], other["queue"]], 2)
    finally:
        redis_db.delete(other["queue"])

    assert sorted(body["from"] for body in received) == ["a", "b"]
    assert redis_db.hlen(keys["unacked_key"]) == 0


def test_a_publish_through_a_closed_channel_is_a_connection_error(
    redis_url: str, redis_db: redis.Redis, keys: dict[str, str]
) -> None:
    """A consumer's restart closes its channels under running gevent tasks; their next hop
    must fail as a connection fault (retried, its review requeued), not an AttributeError
    (rejected, and the review dropped)."""
    with Connection(redis_url, transport=Transport, transport_options=_options(keys)) as connection:
        channel = connection.channel()
        producer = connection.Producer(channel)
        channel.close()

        with pytest.raises(redis.ConnectionError):
            producer.publish({"review": "wd:n1:1"}, routing_key=keys["queue"])

    assert redis_db.llen(keys["queue"]) == 0


def _sweep_and_die(url: str, options: dict[str, Any]) -> int:
    """Run a restore sweep that SIGKILLs itself at its first restore; its exit code."""
    command = [sys.executable, "-m", "tests.integration.dying_sweeper", url, json.dumps(options)]
    return subprocess.run(command, timeout=60, capture_output=True, check=False).returncode


#: Far below the 300 s kombu's restore mutex lives, far above what the fleet gives it.
SWEEP_RECOVERY_BOUND_S = 60.0


def test_a_sweeper_killed_holding_the_restore_mutex_does_not_stop_restores(
    redis_url: str, redis_db: redis.Redis, keys: dict[str, str]
) -> None:
    """A sweeper killed mid-sweep (or whose release met Redis down) leaves the mutex held.

    With kombu's 300 s no worker restored anything for five minutes: the chaos test lost
    the reviews a killed Stage 1 had reserved. With the fleet's options (``app.py``) the
    next sweep after the mutex expires hands the message back.
    """
    fleet = celery_config(Settings(redis_url=redis_url))["broker_transport_options"]
    sweep = {name: fleet[name] for name in ("unacked_mutex_expire",) if name in fleet}
    # Visibility 0: the record is overdue at once, for the dying sweeper and the next one.
    options = _options(keys, visibility_timeout=0, **sweep)
    body = {"review": "wd:n1:1"}
    _publish(redis_url, keys, body)
    assert _consume_and_die(redis_url, keys, "ours") == -9  # the message is in unacked

    assert _sweep_and_die(redis_url, options) == -9
    assert redis_db.exists(keys["unacked_mutex_key"]), "it died holding the mutex"
    assert redis_db.hlen(keys["unacked_key"]) == 1, "and restored nothing"

    with Connection(redis_url, transport=Transport, transport_options=options) as connection:
        qos = connection.default_channel.qos

        def restored() -> bool:
            qos.restore_visible(num=None)  # a worker's periodic sweep
            return bool(redis_db.llen(keys["queue"]))

        back = wait_until(restored, timeout_s=SWEEP_RECOVERY_BOUND_S, every_s=0.5)

    assert back, "the message stayed in unacked behind the dead sweeper's mutex"
    assert redis_db.hlen(keys["unacked_key"]) == 0
    assert _drain(redis_url, keys, [keys["queue"]], 1) == [body]
