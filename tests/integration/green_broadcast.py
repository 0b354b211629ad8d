"""Remote control's broadcast drains under gevent, after redis-py closed the pub/sub socket.

``python -m tests.integration.green_broadcast URL``: patches the standard library as a
gevent worker does, listens as Celery's green remote control loop does, lets redis-py
close the pub/sub connection (as after a failed read), lets another socket take its
descriptor number, and makes that socket readable. Exits 0 when every drain returned, 3
when one hung (``HUNG_AFTER_S``), which stopped a gevent worker consuming for good
(``workers/fleet/transport/broadcast.py``).
"""

from __future__ import annotations

from gevent import monkey  # type: ignore[import-untyped]  # gevent ships no hints

monkey.patch_all()

import contextlib  # noqa: E402  (after the patch, as in a gevent worker)
import sys  # noqa: E402
import uuid  # noqa: E402
from typing import Any  # noqa: E402

import gevent  # noqa: E402
import redis  # noqa: E402

from workers.fleet.app import create_app  # noqa: E402
from workers.settings import Settings  # noqa: E402

#: A drain returns within about a second; one still waiting after this never returns.
HUNG_AFTER_S = 20.0
HUNG = 3


def _drain(connection: Any) -> None:
    with contextlib.suppress(TimeoutError):
        connection.drain_events(timeout=0.2)


def main(url: str) -> int:
    """Drive the listener; 0 when every drain returned, ``HUNG`` when one did not."""
    app = create_app(Settings(redis_url=url, key_prefix=f"green-{uuid.uuid4().hex[:6]}"))
    connection = app.connection_for_read()
    db = redis.Redis.from_url(url)
    other = redis.Redis.from_url(url)
    try:
        node = app.control.mailbox.Node("probe@green", handlers={})
        node.channel = connection.channel()
        node.listen(callback=lambda body, _message: None)
        while not db.pubsub_numpat():
            _drain(connection)
        listening = node.channel.subclient.connection
        closed_fd = listening._sock.fileno()
        listening.disconnect()  # redis-py's own close, as after a failed read
        taker: Any = other.connection_pool.get_connection()
        taker.connect()
        print(f"pub/sub fd {closed_fd} closed; another socket took fd {taker._sock.fileno()}")
        while not db.pubsub_numpat():  # the next drains subscribe again, on a new socket
            _drain(connection)
        taker.send_command("PING")  # its reply waits unread: that socket is readable
        try:
            with gevent.Timeout(HUNG_AFTER_S):
                for _ in range(5):
                    _drain(connection)
        except gevent.Timeout:
            print("a drain never returned")
            return HUNG
        print("every drain returned")
        return 0
    finally:
        other.close()
        db.close()
        connection.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
