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
- About one run in ten of the Redis-restart fault test, the loop waited for good in a read
  of its pub/sub connection (issue 22, item 3). kombu takes a closed connection's socket
  out of its poller after redis-py has dropped it, which fails unseen: the descriptor
  stayed registered as the channel's. gevent's poll watches a descriptor number, so the
  next socket of the process to take that number (a task's) was polled as the channel's,
  and its first reply made kombu read the pub/sub connection; redis-py (8.x) reads a
  blocking pub/sub read with no timeout, and nothing came. Here the socket leaves the
  poller before it closes (``forget_socket``), and a read kombu makes after a poll is
  bounded (``BoundedPubSub``).

``BroadcastChannel`` and ``BroadcastTransport`` carry all three; ``redis_transport.py``
builds on them.
"""

from __future__ import annotations

import contextlib
from time import sleep
from typing import Any, Final

import redis
from kombu.transport import redis as kombu_redis
from kombu.utils.objects import cached_property

#: The longest a read of the pub/sub connection waits once kombu's poller reported it: a
#: reply is there by then, or on its way (a part read is kept for the next read).
READ_AFTER_POLL_S: Final = 1.0


class BoundedPubSub(kombu_redis.PrefixedRedisPubSub):
    """kombu's pub/sub client, whose reads never wait without a bound.

    kombu reads with a blocking ``parse_response()`` when its poller reports the socket
    readable (``_receive``) or in error (``_poll_error``); redis-py reads that one with no
    timeout. A read here waits ``READ_AFTER_POLL_S`` at most and finds nothing, if that is
    what there is: the loop goes on.
    """

    def parse_response(self, block: bool = True, timeout: float = 0) -> Any:
        """The next message, or None when none came (within ``READ_AFTER_POLL_S``)."""
        wait = READ_AFTER_POLL_S if block else timeout
        return super().parse_response(block=False, timeout=wait)


def pubsub_client(channel: Any) -> Any:
    """The channel's pub/sub client, on a pool of its own whose reads are never retried.

    Its reads are bounded (``BoundedPubSub``), and its sockets leave the channel's poller
    before they close (``forget_socket``).
    """
    return bounded_pubsub(channel, redis.ConnectionPool(**pubsub_params(channel)))


def pubsub_params(channel: Any) -> dict[str, Any]:
    """The channel's connection parameters for its pub/sub pool (``pubsub_client``)."""
    params: dict[str, Any] = {**channel._connparams(asynchronous=True), "retry_on_timeout": False}
    params["connection_class"] = _leaving_the_poller(params["connection_class"], channel)
    return params


def bounded_pubsub(channel: Any, pool: redis.ConnectionPool) -> BoundedPubSub:
    """The channel's pub/sub client on ``pool`` (made with ``pubsub_params``)."""
    prefix = getattr(channel, "global_keyprefix", None) or ""
    return BoundedPubSub(pool, global_keyprefix=prefix)


def _leaving_the_poller(base: type, channel: Any) -> type:
    """``base`` (kombu's pub/sub connection), whose socket leaves the poller as it closes."""

    class PubSubConnection(base):  # type: ignore[misc]  # kombu's, made per channel
        def disconnect(self, *args: Any, **kwargs: Any) -> None:
            forget_socket(channel, self._sock)
            super().disconnect(*args, **kwargs)

    return PubSubConnection


def forget_socket(channel: Any, sock: Any) -> None:
    """Take ``sock`` out of the poller of ``channel``'s connection, while it is still open.

    kombu's own attempt comes after redis-py has dropped the socket, and does nothing: a
    stale entry would take another socket that reuses the number for this one.
    """
    if sock is None:
        return
    try:
        fd = sock.fileno()
    except OSError:
        return
    cycle = getattr(getattr(channel, "connection", None), "cycle", None)
    if cycle is None or fd < 0:
        return
    if cycle._fd_to_chan.get(fd) == (channel, "LISTEN"):
        del cycle._fd_to_chan[fd]
    for key, known in list(cycle._chan_to_sock.items()):
        if known is sock:
            del cycle._chan_to_sock[key]
    poller = getattr(cycle, "poller", None)
    if poller is not None:
        with contextlib.suppress(KeyError, ValueError, OSError):
            poller.unregister(fd)


def listens_only(channels: list[Any]) -> bool:
    """Whether these channels consume broadcasts and nothing else (remote control's)."""
    return bool(channels) and all(
        channel.active_fanout_queues and not channel.active_queues for channel in channels
    )


def drop_subscription(channel: Any) -> None:
    """Close the channel's pub/sub connection; kombu connects and subscribes on its next poll.

    Its socket leaves the poller first (``forget_socket``, as every close of it does).
    """
    client = channel.__dict__.get("subclient")  # only once kombu has made it
    connection = getattr(client, "connection", None)
    if connection is None:
        return
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
