"""The broker through Redis Sentinel: kombu's Sentinel channel with our channel's guarantees.

``sentinel://host:port;sentinel://host:port`` with the primary's name (the ``master_name``
transport option, from ``WINDAGS_REDIS_SENTINEL_MASTER``): kombu asks the Sentinels for the
primary on every new connection, so a worker whose connection died with the old primary
reconnects to the promoted replica as after a Redis restart. Everything
``redis_transport.py`` does stays: the take that a kill cannot lose (pop and
record in one script), the quarantine, the restore mutex, the prefixed keys, and the
broadcasts that survive a reconnect (the pub/sub client's reads are never retried: its
pool is Sentinel-managed too, below).
"""

from __future__ import annotations

from typing import Any

import redis
from kombu.transport import redis as kombu_redis
from kombu.utils.objects import cached_property
from kombu.utils.url import _parse_url
from redis.sentinel import Sentinel

from workers.fleet.transport import broadcast, redis_transport


class SentinelChannel(redis_transport.Channel, kombu_redis.SentinelChannel):
    """Our channel, on the connection pools kombu's Sentinel channel builds."""

    from_transport_options = (  # type: ignore[assignment]  # kombu's tuple, extended
        *redis_transport.Channel.from_transport_options,
        "master_name",
        "min_other_sentinels",
        "sentinel_kwargs",
        "sentinel_fanout_compat",
    )
    master_name: str | None = None
    _pubsub_sentinels: Sentinel | None = None

    @cached_property
    def subclient(self) -> Any:
        """The pub/sub client, on a Sentinel-managed pool of its own, reads never retried.

        Bounded reads, sockets that leave the poller as they close: ``broadcast.py``.
        """
        return broadcast.bounded_pubsub(self, self._pubsub_pool(broadcast.pubsub_params(self)))

    def _pubsub_pool(self, params: dict[str, Any]) -> redis.ConnectionPool:
        host, port = params.pop("host", None), params.pop("port", None)
        sentinels = []
        for url in self.connection.client.alt:
            parsed = _parse_url(url)
            if parsed.scheme == "sentinel":
                sentinels.append((parsed.hostname, parsed.port or self.connection.default_port))
        if not sentinels:
            sentinels.append((host, port))
        self._pubsub_sentinels = Sentinel(
            sentinels,
            min_other_sentinels=getattr(self, "min_other_sentinels", 0),
            sentinel_kwargs=getattr(self, "sentinel_kwargs", None),
            **params,
        )
        if self.master_name is None:
            raise ValueError("'master_name' transport option must be specified.")
        master = self._pubsub_sentinels.master_for(self.master_name, redis.Redis)
        pool: redis.ConnectionPool = master.connection_pool
        return pool

    def _disconnect_pools(self) -> None:
        super()._disconnect_pools()
        sentinels, self._pubsub_sentinels = self._pubsub_sentinels, None
        if sentinels is not None:
            sentinels.close()


class SentinelTransport(redis_transport.Transport):
    """The Redis transport with ``SentinelChannel``, on Sentinel's default port."""

    default_port = 26379  # type: ignore[assignment]  # kombu's None, a port here
    Channel = SentinelChannel


#: ``broker_transport`` for ``sentinel://`` URLs.
SENTINEL_TRANSPORT = f"{__name__}:SentinelTransport"
