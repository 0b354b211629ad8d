"""Remote control's broadcast connection across a Redis restart (``transport/broadcast.py``).

A gevent worker's remote control (Celery's green pidbox) drains broadcasts in a loop of its
own, and its consumer waits for that loop to stop before it reconnects. When the loop read
its closed connection only after Redis was back, redis-py retried the read on a fresh
connection nothing had subscribed and waited there for good: the worker never consumed
again (celery#9191). Its drains must return, and it must hear broadcasts again.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from tests.infrastructure import require_redis_server
from workers.fleet.app import create_app
from workers.local.redis_server import PrivateRedis
from workers.settings import Settings

pytestmark = pytest.mark.integration


@pytest.fixture
def server() -> Iterator[PrivateRedis]:
    """A redis-server of the test's own: it is killed and started again."""
    require_redis_server()
    server = PrivateRedis().start()
    try:
        yield server
    finally:
        server.close()


@pytest.mark.timeout(60)
def test_broadcasts_are_heard_again_after_a_redis_restart(server: PrivateRedis) -> None:
    """Before, the first drain after the restart never returned (the test timed out); with
    only the retry gone, it raised, which ended Celery's loop until the consumer reconnected."""
    app = create_app(Settings(redis_url=server.url))
    connection = app.connection_for_read()
    db = redis.Redis.from_url(server.url)
    heard: list[dict[str, Any]] = []
    try:
        node = app.control.mailbox.Node("probe@broadcast", handlers={})
        node.channel = connection.channel()
        node.listen(callback=lambda body, _message: heard.append(body))
        while not db.pubsub_numpat():  # drained until kombu has subscribed
            _drain(connection)
        server.restart(kill=True)  # back before the loop reads its connection's end

        while not db.pubsub_numpat():  # the first drain meets the closed connection
            _drain(connection)
        _drain(connection)  # a quiet one keeps the subscription
        assert db.pubsub_numpat() == 1
        app.control.broadcast("ping", destination=["probe@broadcast"], reply=False)
        while not heard:
            _drain(connection)
    finally:
        db.close()
        connection.close()

    assert heard[0]["method"] == "ping"


def _drain(connection: Any) -> None:
    """One drain as Celery's green remote control loop does it: a timeout is no error."""
    with contextlib.suppress(TimeoutError):
        connection.drain_events(timeout=0.2)
