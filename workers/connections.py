"""Redis connections with bounded waits, for the client, the workers and the subscribers."""

from __future__ import annotations

import redis

from workers.settings import Settings


def redis_client(settings: Settings, *, max_connections: int = 64) -> redis.Redis:
    """A client with a blocking pool: threads wait for a connection instead of failing.

    Every wait is bounded: connecting, reading a reply, and waiting for a free connection.
    """
    pool = redis.BlockingConnectionPool.from_url(
        settings.redis_url,
        max_connections=max_connections,
        timeout=10,
        socket_timeout=10,
        socket_connect_timeout=5,
        health_check_interval=25,
        retry_on_timeout=True,
    )
    return redis.Redis(connection_pool=pool)
