"""The broker channel's Redis clients, and its keys under the deployment's prefix.

kombu builds a ``redis.Redis`` per command (about 0.2 ms of CPU here: ~170 response
callbacks copied), three per task hop; this channel reuses one per connection pool.
``redis.Redis`` is thread-safe and every command is unchanged.

Every key and channel kombu names carries the deployment's ``global_keyprefix``
(``Keys.broker``): kombu's prefixing client adds it to the commands kombu sends, but to
the first key only of a script. Our scripts (the take, the quarantine) run on a plain
client of the same pool (``scripts_client``), every key spelled whole (``broker_key``).

A closed channel keeps no socket. kombu disconnects a channel's pools as it closes, but a
command already under way reconnects its connection afterwards, and hands it back to the
pool it came from, which nobody disconnects again: on the gevent pool Celery's heartbeat
publishes through the event dispatcher's channel while the consumer closes it, and its
connect, retried while Redis is down, succeeds once Redis is back. A gevent worker held one
more socket to Redis, in CLOSE_WAIT after the next restart, per Redis restart. A pool the
channel lets go closes each connection handed back to it (``_retire``); the pool the
hand-back of the channel's deliveries makes during its close is let go as the close ends.
"""

from __future__ import annotations

from typing import Any

import redis

from workers.fleet.transport import broadcast


class ClientsChannel(broadcast.BroadcastChannel):
    """A Redis channel with one reused client per pool, and one for our scripts."""

    _sync_client: Any = None
    _scripts_client: Any = None
    _scripts: dict[str, Any] | None = None

    def _connparams(self, asynchronous: bool = False) -> Any:
        # A closed connection leaves its transport without a client (a closed channel,
        # without a transport): kombu's AttributeError ("'NoneType' object has no attribute
        # 'hostname'") from a restore_unacked or late ack made a worker holding reserved
        # messages exit when Redis restarts (kombu#970, #582), and dropped the review of a
        # gevent task publishing its next hop through a channel its consumer closed. A
        # connection error is retried instead; unacked records come back after the timeout.
        if self.connection is None or self.connection.client is None:
            raise redis.ConnectionError("the broker connection is closed (Redis went away)")
        return super()._connparams(asynchronous=asynchronous)

    def _disconnect_pools(self) -> None:
        for pool in (self._pool, self._async_pool):
            if pool is not None:
                _retire(pool)
        super()._disconnect_pools()

    def close(self) -> None:
        """Close; a pool made during the close (the hand-back's) is let go too."""
        try:
            super().close()
        finally:
            self._disconnect_pools()

    def _create_client(self, asynchronous: bool = False) -> Any:
        if asynchronous:
            return super()._create_client(asynchronous=True)
        client = self._sync_client
        if client is None or client.connection_pool is not self.pool:
            client = self._sync_client = super()._create_client()
            self._scripts_client = redis.Redis(connection_pool=self.pool)
            self._scripts = {}
        return client

    def scripts_client(self) -> redis.Redis:
        """A client of the channel's pool that leaves keys as given (for our scripts)."""
        self._create_client()
        client: redis.Redis = self._scripts_client
        return client

    def script(self, lua: str) -> Any:
        """``lua`` registered on ``scripts_client`` (once per pool)."""
        client = self.scripts_client()
        scripts = self._scripts if self._scripts is not None else {}
        found = scripts.get(lua)
        if found is None:
            found = scripts[lua] = client.register_script(lua)
        return found

    def broker_key(self, name: str) -> str:
        """The Redis key of kombu's ``name`` (a queue, ``unacked``...), prefix included."""
        return f"{self.global_keyprefix}{name}"


class _RetiredPool:
    """A connection pool its channel let go: a connection handed back to it is closed.

    Commands under way may still take and hand back its connections; none stays open.
    """

    def release(self, connection: Any) -> None:
        """Hand ``connection`` back, closed."""
        super().release(connection)  # type: ignore[misc]  # the pool class it is mixed into
        connection.disconnect()


#: Per redis-py pool class, its let-go subclass (``_retire``).
_RETIRED: dict[type, type] = {}


def _retired(base: type) -> type:
    """``base`` (a redis-py connection pool class) as a let-go pool."""
    found = _RETIRED.get(base)
    if found is None:
        found = _RETIRED[base] = type(f"Retired{base.__name__}", (_RetiredPool, base), {})
    return found


def _retire(pool: Any) -> None:
    """Let ``pool`` go: from now on it closes every connection handed back to it.

    Its class changes in place: the commands under way hold the pool itself, and its class
    is redis-py's or Sentinel's, as kombu built it.
    """
    if not isinstance(pool, _RetiredPool):
        pool.__class__ = _retired(type(pool))
