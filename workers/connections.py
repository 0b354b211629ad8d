"""Redis connections with bounded waits, for the client, the workers and the subscribers."""

from __future__ import annotations

from typing import Any

import redis

from workers.settings import Settings

#: Longest a thread waits for a free connection of a full pool.
POOL_WAIT_S = 10.0


def socket_options(settings: Settings) -> dict[str, Any]:
    """The timeouts every Redis connection of the fleet opens with (redis-py's names).

    A Redis that accepts connections but never answers (SIGSTOPped, a full host) would
    otherwise hold a caller forever: the kernel completes the TCP handshake for it.
    """
    return {
        "socket_timeout": settings.redis_socket_timeout_s,
        "socket_connect_timeout": settings.redis_connect_timeout_s,
    }


def redis_client(settings: Settings, *, max_connections: int = 64) -> redis.Redis:
    """A client with a blocking pool: threads wait for a connection instead of failing.

    Every wait is bounded: connecting, reading a reply, and waiting for a free connection.
    A timed-out read is retried once on a fresh connection (redis-py's ``retry_on_timeout``)
    before the caller sees ``redis.TimeoutError``.
    """
    pool = redis.BlockingConnectionPool.from_url(
        settings.redis_url,
        max_connections=max_connections,
        timeout=POOL_WAIT_S,
        health_check_interval=25,
        retry_on_timeout=True,
        **socket_options(settings),
    )
    return redis.Redis(connection_pool=pool)
