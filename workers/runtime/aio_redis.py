"""redis.asyncio clients of the state Redis, with the same bounded waits as the sync ones.

Two kinds: a small pool for commands (look-ups, acks, wake-ups), and the one connection
a client's reader blocks on. Neither retries by itself: a timed-out read surfaces, and
the caller decides (the reader waits out an outage up to the client's bound).
A ``cluster://`` state Redis is refused: one reader reads every watched DAG's stream in
one ``XREAD``, and a cluster spreads those streams over slots.
"""

from __future__ import annotations

from typing import Any

import redis.asyncio as aredis
from redis.asyncio.retry import Retry
from redis.asyncio.sentinel import Sentinel
from redis.backoff import NoBackoff

from workers.connections import POOL_WAIT_S, socket_options
from workers.errors import ConfigurationError
from workers.redis_urls import is_cluster, is_sentinel, parse_sentinel_url
from workers.settings import Settings


def command_client(settings: Settings, *, max_connections: int) -> aredis.Redis:
    """Commands share a blocking pool: a burst of callers queues for a connection."""
    return _client(settings, max_connections=max_connections, timeout=POOL_WAIT_S)


def reader_client(settings: Settings) -> aredis.Redis:
    """One connection, held by the reader for its blocking ``XREAD``."""
    return _client(settings, max_connections=1, timeout=POOL_WAIT_S)


def _client(settings: Settings, **pool: Any) -> aredis.Redis:
    url = settings.state_url
    if is_cluster(url):
        raise ConfigurationError(
            "the asyncio client reads one Redis or a Sentinel-watched primary; "
            "WINDAGS_STATE_REDIS_URL names a cluster: use ReviewClient"
        )
    options: dict[str, Any] = {
        **socket_options(settings),
        "health_check_interval": 25,
        "retry": Retry(NoBackoff(), 0),
        **pool,
    }
    if is_sentinel(url):
        address = parse_sentinel_url(url)
        if settings.redis_sentinel_master is None:
            raise ConfigurationError("a sentinel:// URL needs WINDAGS_REDIS_SENTINEL_MASTER")
        sentinels = Sentinel(list(address.sentinels), sentinel_kwargs=socket_options(settings))
        primary: aredis.Redis = sentinels.master_for(
            settings.redis_sentinel_master,
            db=address.db,
            username=address.username,
            password=address.password,
            connection_pool_class=_BlockingSentinelPool,
            **options,
        )
        return primary
    return aredis.Redis(connection_pool=aredis.BlockingConnectionPool.from_url(url, **options))


class _BlockingSentinelPool(aredis.sentinel.SentinelConnectionPool, aredis.BlockingConnectionPool):
    """The Sentinels' primary, with a blocking pool's bounded wait for a free connection."""
