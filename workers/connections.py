"""Redis connections with bounded waits, for the client, the workers and the subscribers.

With a ``sentinel://`` URL every state connection (results, ledger, limiter, cache, human
gate, calibration) goes to the primary the Sentinels name, through redis-py's
``Sentinel.master_for``: after a failover a connection asks them again, and one still open
to a demoted primary is closed on its first ``READONLY`` reply. The broker's are kombu's
(``workers/fleet/transport/redis_transport.py``).

State may live apart from the broker (``WINDAGS_STATE_REDIS_URL``), on a Redis Cluster
(``cluster://``): ``redis_client`` is then redis-py's ``RedisCluster``, which routes each
command and script by its keys' slot (``workers/keys.py`` puts a review's keys in one).
What reads the broker's own keys (queue depths) asks ``broker_client``.
"""

from __future__ import annotations

from typing import Any, cast

import redis
from redis.cluster import ClusterNode, RedisCluster
from redis.sentinel import Sentinel, SentinelConnectionPool

from workers.redis_urls import is_cluster, is_sentinel, parse_cluster_url, parse_sentinel_url
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
    """The state's client, with a blocking pool: threads wait for a connection, not fail.

    Every wait is bounded: connecting, reading a reply, and waiting for a free connection.
    A timed-out read is retried once on a fresh connection (redis-py's ``retry_on_timeout``)
    before the caller sees ``redis.TimeoutError``. On a cluster, each node's pool holds up
    to ``max_connections``.
    """
    return _blocking_client(settings, settings.state_url, max_connections)


def broker_client(settings: Settings, *, max_connections: int = 4) -> redis.Redis:
    """A client of the broker's Redis (``WINDAGS_REDIS_URL``), to read what kombu keeps."""
    return _blocking_client(settings, settings.redis_url, max_connections)


def _blocking_client(settings: Settings, url: str, max_connections: int) -> redis.Redis:
    options: dict[str, Any] = {
        "max_connections": max_connections,
        "timeout": POOL_WAIT_S,
        "health_check_interval": 25,
        "retry_on_timeout": True,
        **socket_options(settings),
    }
    if is_cluster(url):
        return cluster_client(url, connection_pool_class=redis.BlockingConnectionPool, **options)
    if is_sentinel(url):
        return redis.Redis(connection_pool=sentinel_pool(settings, url, **options))
    pool = redis.BlockingConnectionPool.from_url(url, **options)
    return redis.Redis(connection_pool=pool)


def cluster_client(url: str, **options: Any) -> redis.Redis:
    """A Redis Cluster client discovered from the URL's nodes (``options``: redis-py's).

    Typed as ``redis.Redis``: ``RedisCluster`` answers the commands, scripts and pipelines
    the stores use with the same signatures (single-slot scripts, non-transactional or
    single-slot pipelines; ``tests/test_cluster_slots.py``), but redis-py does not declare
    it a subclass.
    """
    address = parse_cluster_url(url)
    client = RedisCluster(
        startup_nodes=[
            ClusterNode(host, port)  # type: ignore[no-untyped-call]  # redis-py's untyped __init__
            for host, port in address.nodes
        ],
        username=address.username,
        password=address.password,
        **options,
    )
    return cast(redis.Redis, client)


def sentinel_pool(
    settings: Settings, url: str | None = None, **options: Any
) -> BlockingSentinelPool:
    """A pool of connections to the primary the URL's Sentinels name (``options``: redis-py's).

    A Sentinel that does not answer is skipped within the socket timeouts; while none
    names a primary (during a failover), connecting raises ``MasterNotFoundError``, a
    ``redis.ConnectionError``, which callers retry as any other.
    """
    address = parse_sentinel_url(url or settings.redis_url)
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
    """A state client of its own connection pool with ``options`` (redis-py's), for checks.

    ``redis.Redis.from_url`` for one Redis; the Sentinels' primary for a ``sentinel://`` URL;
    ``RedisCluster`` for a ``cluster://`` one.
    """
    url = settings.state_url
    if is_cluster(url):
        return cluster_client(url, **options)
    if is_sentinel(url):
        return redis.Redis.from_pool(sentinel_pool(settings, url, **options))
    return redis.Redis.from_url(url, **options)
