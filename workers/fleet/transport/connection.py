"""A broker connection that keeps the fleet's transport when it fails over to another address.

A broker URL may name several addresses (``sentinel://a;sentinel://b;...``). When the one in
use does not answer, kombu moves the connection to the next (``Connection.switch``) and reads
the new address as a URL: its scheme replaces the transport the connection was built with
(``broker_transport``). So every worker that rode out a Sentinel failover went on with
kombu's own Sentinel transport: a take by ``BRPOP`` that a kill can lose, no quarantine, no
hand-back when Redis comes back, no reserved sets (a tag our take had recorded stayed in its
set when kombu's QoS acked it, and KEDA counted it in flight for ever; nothing taken after
the failover was counted at all), and kombu's restore sweep, which reconciles nothing.

The same switch replaced the first address's password with the next one's, which has none
(the fleet's URL puts it on the first address only, ``workers/redis_urls.py``): a primary
that asks for one would answer ``NOAUTH`` (an ``AuthenticationError``, so kombu tries the
next address) until kombu came round to the first again; not tried against such a group.
The credentials stay too, unless the next address names its own.

The Celery app builds every broker connection (the consumer's, remote control's, the
producer pool's, and their clones) from ``FleetAMQP.Connection`` (``workers/fleet/app.py``).
"""

from __future__ import annotations

from typing import Any

from celery.app.amqp import AMQP
from kombu.connection import Connection, ConnectionPool, PooledConnection


class FleetConnection(Connection):
    """kombu's connection; a failover moves its address, never its transport."""

    def switch(self, conn_str: str) -> None:
        """Move to ``conn_str``, keeping the transport, and the credentials it names none of."""
        transport, userid, password = self.transport_cls, self.userid, self.password
        super().switch(conn_str)  # type: ignore[no-untyped-call]  # kombu's, untyped
        self.transport_cls = transport
        if self.userid is None and self.password is None:
            self.userid, self.password = userid, password

    def Pool(self, limit: int | None = None, **kwargs: Any) -> ConnectionPool:
        """A pool of connections like this one (Celery's producer pool)."""
        return _FleetConnectionPool(self, limit=limit, **kwargs)  # type: ignore[no-untyped-call]


class _PooledFleetConnection(PooledConnection, FleetConnection):
    """A pooled ``FleetConnection``."""


class _FleetConnectionPool(ConnectionPool):
    """kombu's connection pool, of ``_PooledFleetConnection``."""

    def new(self) -> _PooledFleetConnection:
        """A connection like the pool's (kombu's ``new``, with our class)."""
        info = dict(self.connection._info(resolve=False))
        return _PooledFleetConnection(self, **info)  # type: ignore[no-untyped-call]


class FleetAMQP(AMQP):  # type: ignore[misc]  # celery ships no type hints
    """Celery's AMQP helpers, whose connections are ``FleetConnection``."""

    Connection: Any = FleetConnection
