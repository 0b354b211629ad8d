"""Remote control's broadcast connection across a Redis restart (``transport/broadcast.py``).

A gevent worker's remote control (Celery's green pidbox) drains broadcasts in a loop of its
own, and its consumer waits for that loop to stop before it reconnects. When the loop read
its closed connection only after Redis was back, redis-py retried the read on a fresh
connection nothing had subscribed and waited there for good: the worker never consumed
again (celery#9191). Its drains must return, and it must hear broadcasts again.

Nor may a socket the loop's pub/sub connection closed stay in kombu's poller: under gevent
a socket that took its number was polled as the channel's, and kombu then read the idle
pub/sub connection with no timeout (issue 22, item 3: the consumer waited for the loop in
Celery's pidbox ``on_stop`` for good).
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
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


def _listening(app: Any, connection: Any, db: redis.Redis) -> Any:
    """A remote control node's channel, subscribed."""
    node = app.control.mailbox.Node("probe@broadcast", handlers={})
    node.channel = connection.channel()
    node.listen(callback=lambda body, _message: None)
    while not db.pubsub_numpat():
        _drain(connection)
    return node.channel


@pytest.mark.timeout(60)
def test_a_pubsub_socket_redis_py_closes_leaves_the_poller(server: PrivateRedis) -> None:
    app = create_app(Settings(redis_url=server.url))
    connection = app.connection_for_read()
    db = redis.Redis.from_url(server.url)
    try:
        channel = _listening(app, connection, db)
        cycle = channel.connection.cycle
        sock = channel.subclient.connection._sock
        fd = sock.fileno()
        assert cycle._fd_to_chan[fd] == (channel, "LISTEN")

        channel.subclient.connection.disconnect()  # as redis-py does after a failed read

        assert fd not in cycle._fd_to_chan
        assert sock not in cycle._chan_to_sock.values()
        _drain(connection)  # and the next drain subscribes again
        assert db.pubsub_numpat() == 1
    finally:
        db.close()
        connection.close()


@pytest.mark.timeout(60)
def test_a_read_after_a_poll_that_found_nothing_returns(server: PrivateRedis) -> None:
    """kombu reads when its poller reports the socket readable, or in error; a report about
    another socket found nothing to read, and redis-py's blocking read never returned."""
    app = create_app(Settings(redis_url=server.url))
    connection = app.connection_for_read()
    db = redis.Redis.from_url(server.url)
    try:
        channel = _listening(app, connection, db)
        _drain(connection)  # nothing left unread

        assert not channel._receive()
        channel._poll_error("LISTEN")
        assert db.pubsub_numpat() == 1
    finally:
        db.close()
        connection.close()


def test_a_socket_that_takes_a_closed_pubsub_sockets_number_is_not_polled_as_it(
    server: PrivateRedis,
) -> None:
    """Under gevent's poll, which watches numbers: the drains return (``green_broadcast``)."""
    command = [sys.executable, "-m", "tests.integration.green_broadcast", server.url]
    done = subprocess.run(command, capture_output=True, text=True, timeout=90, check=False)
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]


def _drain(connection: Any) -> None:
    """One drain as Celery's green remote control loop does it: a timeout is no error."""
    with contextlib.suppress(TimeoutError):
        connection.drain_events(timeout=0.2)
