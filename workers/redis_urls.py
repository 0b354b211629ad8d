"""The Redis addresses the fleet accepts, Redis Sentinel's among them.

``WINDAGS_REDIS_URL`` names one Redis (``redis://``, ``rediss://``, ``unix://``) or the
Sentinels that watch a primary and its replicas:
``sentinel://[:PASSWORD@]HOST:PORT[/DB];sentinel://HOST:PORT;...``, with the primary's
name in ``WINDAGS_REDIS_SENTINEL_MASTER``. The first address carries the password and
the database number, as kombu reads them for the broker; the state connections
(``workers/connections.py``) read them the same way here.

``WINDAGS_STATE_REDIS_URL`` may also name a Redis Cluster by some of its nodes:
``cluster://[[USER]:PASSWORD@]HOST:PORT;cluster://HOST:PORT;...`` (the first carries the
credentials; a cluster has database 0 only). The broker never runs on one: kombu has no
cluster transport. Pure parsing: no connection.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

SENTINEL_SCHEME = "sentinel://"
CLUSTER_SCHEME = "cluster://"
SCHEMES = ("redis://", "rediss://", "unix://", SENTINEL_SCHEME, CLUSTER_SCHEME)
#: Sentinel's own port, when an address leaves it out (kombu's default too).
SENTINEL_PORT = 26379


@dataclass(frozen=True, slots=True)
class SentinelUrl:
    """The Sentinels to ask for the primary, and how to open its database."""

    sentinels: tuple[tuple[str, int], ...]
    db: int
    username: str | None
    password: str | None


@dataclass(frozen=True, slots=True)
class ClusterUrl:
    """Nodes to discover a Redis Cluster from, and its credentials."""

    nodes: tuple[tuple[str, int], ...]
    username: str | None
    password: str | None


def is_sentinel(url: str) -> bool:
    """Whether ``url`` names Sentinels rather than one Redis."""
    return url.startswith(SENTINEL_SCHEME)


def is_cluster(url: str) -> bool:
    """Whether ``url`` names the nodes of a Redis Cluster."""
    return url.startswith(CLUSTER_SCHEME)


def checked_url(url: str) -> str:
    """``url`` if the fleet can connect with it.

    Raises:
        ValueError: an unknown scheme, or a Sentinel address that does not parse.
    """
    if not url.startswith(SCHEMES):
        raise ValueError(f"must start with one of {', '.join(SCHEMES)}")
    if is_sentinel(url):
        parse_sentinel_url(url)
    if is_cluster(url):
        parse_cluster_url(url)
    return url


def checked_broker_url(url: str) -> str:
    """``url`` if the broker can run there: any of ``SCHEMES`` but a cluster.

    Raises:
        ValueError: as ``checked_url``, or a ``cluster://`` URL (kombu has no cluster transport).
    """
    if is_cluster(checked_url(url)):
        raise ValueError(
            "the broker cannot run on a Redis Cluster (kombu has no cluster transport): "
            "name the cluster in WINDAGS_STATE_REDIS_URL"
        )
    return url


def check_master(url: str, master: str | None) -> None:
    """A Sentinel URL needs the primary's name (one Redis ignores it).

    Raises:
        ValueError: a ``sentinel://`` URL without the name.
    """
    if is_sentinel(url) and not master:
        raise ValueError("WINDAGS_REDIS_SENTINEL_MASTER: a sentinel:// URL needs the master name")


def parse_cluster_url(url: str) -> ClusterUrl:
    """The nodes of ``cluster://h:p;cluster://h:p...``, with the first's credentials.

    Raises:
        ValueError: an address that is not ``cluster://host:port``, or a database other than 0.
    """
    parts = [part.strip() for part in url.split(";") if part.strip()]
    if not parts:
        raise ValueError("no cluster node address")
    nodes: list[tuple[str, int]] = []
    for part in parts:
        if not is_cluster(part):
            raise ValueError(f"{_shown(part)!r}: every address must be cluster://host:port")
        split = urlsplit(part)
        try:
            port = split.port
        except ValueError as exc:
            raise ValueError(f"{_shown(part)!r}: {exc}") from None
        if not split.hostname or port is None:
            raise ValueError(f"{_shown(part)!r}: needs a host and a port")
        if split.path.strip("/") not in ("", "0"):
            raise ValueError(f"{_shown(part)!r}: a Redis Cluster has database 0 only")
        nodes.append((split.hostname, port))
    first = urlsplit(parts[0])
    return ClusterUrl(
        nodes=tuple(nodes),
        username=unquote(first.username) if first.username else None,
        password=unquote(first.password) if first.password else None,
    )


def parse_sentinel_url(url: str) -> SentinelUrl:
    """The Sentinels of ``sentinel://h:p[/db];sentinel://h:p...``, with the first's db and password.

    Raises:
        ValueError: an address that is not ``sentinel://host[:port]``, or a bad database.
    """
    parts = [part.strip() for part in url.split(";") if part.strip()]
    if not parts:
        raise ValueError("no sentinel address")
    sentinels: list[tuple[str, int]] = []
    for part in parts:
        if not is_sentinel(part):
            raise ValueError(f"{_shown(part)!r}: every address must be sentinel://host:port")
        split = urlsplit(part)
        try:
            port = split.port or SENTINEL_PORT
        except ValueError as exc:
            raise ValueError(f"{_shown(part)!r}: {exc}") from None
        if not split.hostname:
            raise ValueError(f"{_shown(part)!r}: no host")
        sentinels.append((split.hostname, port))
    first = urlsplit(parts[0])
    path = first.path.strip("/")
    if path and not path.isdigit():
        raise ValueError(f"{_shown(parts[0])!r}: the database must be a number, not {path!r}")
    return SentinelUrl(
        sentinels=tuple(sentinels),
        db=int(path or 0),
        username=unquote(first.username) if first.username else None,
        password=unquote(first.password) if first.password else None,
    )


def _shown(address: str) -> str:
    """``address`` fit for an error message: its password is never printed."""
    scheme, sep, rest = address.partition("://")
    userinfo, at, host = rest.rpartition("@")
    if not sep or not at:
        return address
    user = userinfo.partition(":")[0]
    return f"{scheme}://{user}:***@{host}"
