"""Redis connections with bounded waits, for the client, the workers and the subscribers.

With a ``sentinel://`` URL every state connection (results, ledger, limiter, cache, human
gate, calibration) goes to the primary the Sentinels name, through redis-py's
``Sentinel.master_for``: after a failover a connection asks them again, and one still open
to a demoted primary is closed on its first ``READONLY`` reply. The broker's are kombu's
(``workers/fleet/transport.py``).
"""

from __future__ import annotations

from typing import Any

import redis
from redis.sentinel import Sentinel, SentinelConnectionPool

from workers.redis_urls import is_sentinel, parse_sentinel_url
from workers.settings import Settings

#: Longest a thread waits for a free connection of a full pool.
POOL_WAIT_S = 10.0


class BlockingSentinelPool(SentinelConnectionPool, redis.BlockingConnectionPool):
    """The Sentinels' primary, with a blocking pool's bounded wait for a free connection."""


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
    options: dict[str, Any] = {
        "max_connections": max_connections,
        "timeout": POOL_WAIT_S,
        "health_check_interval": 25,
        "retry_on_timeout": True,
        **socket_options(settings),
    }
    if is_sentinel(settings.redis_url):
        return redis.Redis(connection_pool=sentinel_pool(settings, **options))
    pool = redis.BlockingConnectionPool.from_url(settings.redis_url, **options)
    return redis.Redis(connection_pool=pool)


def sentinel_pool(settings: Settings, **options: Any) -> BlockingSentinelPool:
    """A pool of connections to the primary the URL's Sentinels name (``options``: redis-py's).

    A Sentinel that does not answer is skipped within the socket timeouts; while none
    names a primary (during a failover), connecting raises ``MasterNotFoundError``, a
    ``redis.ConnectionError``, which callers retry as any other.
    """
    address = parse_sentinel_url(settings.redis_url)
    master = settings.redis_sentinel_master
    if master is None:  # Settings refuses a sentinel:// URL without it
        raise ValueError("a sentinel:// URL needs WINDAGS_REDIS_SENTINEL_MASTER")
    sentinels = Sentinel(address.sentinels, sentinel_kwargs=socket_options(settings))
    return BlockingSentinelPool(  # type: ignore[no-untyped-call]  # redis-py's untyped __init__
        master,
        sentinels,
        db=address.db,
        username=address.username,
        password=address.password,
        **options,
    )


def plain_client(settings: Settings, **options: Any) -> redis.Redis:
    """A client of its own connection pool with ``options`` (redis-py's), for one-off checks.

    ``redis.Redis.from_url`` for one Redis; the Sentinels' primary for a ``sentinel://`` URL.
    """
    if is_sentinel(settings.redis_url):
        return redis.Redis.from_pool(sentinel_pool(settings, **options))
    return redis.Redis.from_url(settings.redis_url, **options)
