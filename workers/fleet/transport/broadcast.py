"""Remote control's broadcasts over our transport, through Redis restarts.

A worker hears broadcasts (``ping``, ``inspect``) on a pub/sub connection that kombu
subscribes and polls. On the gevent pool Celery reads them in a loop of its own (the
green pidbox) on a connection of its own; the consumer stops that loop, and waits for it,
before it reconnects, and starts a new one after. Two things broke a gevent worker after
a Redis restart:

- Redis-py retried a failed read (our ``retry_on_timeout``) on a fresh connection nothing
  had subscribed, and waited there with no timeout: the loop never returned, and the
  consumer waiting for it never consumed again (celery#9191). Our pub/sub client has no
  such retry: the read fails.
- A failed read ended the loop, and only a consumer that reconnects starts another: one
  that rode out the restart (nothing in flight on its connection) kept consuming, but the
  worker never answered a ping again. A connection that only listens drops its
  subscription instead, and the next drain connects and subscribes afresh.

``BroadcastChannel`` and ``BroadcastTransport`` carry both; ``redis_transport.py``
builds on them.
"""

from __future__ import annotations

from time import sleep
from typing import Any

import redis
from kombu.transport import redis as kombu_redis
from kombu.utils.objects import cached_property


def pubsub_client(channel: Any) -> Any:
    """The channel's pub/sub client, on a pool of its own whose reads are never retried."""
    params = {**channel._connparams(asynchronous=True), "retry_on_timeout": False}
    return channel.Client(connection_pool=redis.ConnectionPool(**params)).pubsub()


def listens_only(channels: list[Any]) -> bool:
    """Whether these channels consume broadcasts and nothing else (remote control's)."""
    return bool(channels) and all(
        channel.active_fanout_queues and not channel.active_queues for channel in channels
    )


def drop_subscription(channel: Any) -> None:
    """Close the channel's pub/sub connection; kombu connects and subscribes on its next poll.

    Its socket leaves the poller first, while it still has a descriptor: a stale entry
    would take another socket that reuses the number for this one, and wait on it.
    """
    client = channel.__dict__.get("subclient")  # only once kombu has made it
    connection = getattr(client, "connection", None)
    if connection is None:
        return
    sock = connection._sock
    if sock is not None:
        cycle = channel.connection.cycle
        cycle._fd_to_chan.pop(sock.fileno(), None)
        cycle._chan_to_sock.pop((channel, client, "LISTEN"), None)
        cycle.poller.unregister(sock)
    connection.disconnect()
    channel._in_listen = None


class BroadcastChannel(kombu_redis.Channel):
    """A Redis channel whose pub/sub client's reads are never retried."""

    @cached_property
    def subclient(self) -> Any:
        """The pub/sub client (``pubsub_client``)."""
        return pubsub_client(self)


class BroadcastTransport(kombu_redis.Transport):
    """A Redis transport whose broadcast-only connections wait out a Redis outage."""

    def drain_events(self, connection: Any, timeout: Any = None, **kwargs: Any) -> Any:
        """Drain; on a connection that only listens, an outage is a timeout.

        Its subscription is dropped and the drain times out after ``timeout`` (1 s when
        None), so Celery's green remote control loop goes on.
        """
        try:
            return super().drain_events(connection, timeout=timeout, **kwargs)
        except TimeoutError:  # nothing came (an OSError, as connection errors are)
            raise
        except self.connection_errors:
            channels = list(self.channels)
            if not listens_only(channels):
                raise
            for channel in channels:
                drop_subscription(channel)
            sleep(1.0 if timeout is None else timeout)
            raise TimeoutError("the broadcast connection is down; retried next drain") from None
