"""The Redis addresses the fleet accepts, Redis Sentinel's among them.

``WINDAGS_REDIS_URL`` names one Redis (``redis://``, ``rediss://``, ``unix://``) or the
Sentinels that watch a primary and its replicas:
``sentinel://[:PASSWORD@]HOST:PORT[/DB];sentinel://HOST:PORT;...``, with the primary's
name in ``WINDAGS_REDIS_SENTINEL_MASTER``. The first address carries the password and
the database number, as kombu reads them for the broker; the state connections
(``workers/connections.py``) read them the same way here. Pure parsing: no connection.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

SENTINEL_SCHEME = "sentinel://"
SCHEMES = ("redis://", "rediss://", "unix://", SENTINEL_SCHEME)
#: Sentinel's own port, when an address leaves it out (kombu's default too).
SENTINEL_PORT = 26379


@dataclass(frozen=True, slots=True)
class SentinelUrl:
    """The Sentinels to ask for the primary, and how to open its database."""

    sentinels: tuple[tuple[str, int], ...]
    db: int
    username: str | None
    password: str | None


def is_sentinel(url: str) -> bool:
    """Whether ``url`` names Sentinels rather than one Redis."""
    return url.startswith(SENTINEL_SCHEME)


def checked_url(url: str) -> str:
    """``url`` if the fleet can connect with it.

    Raises:
        ValueError: an unknown scheme, or a Sentinel address that does not parse.
    """
    if not url.startswith(SCHEMES):
        raise ValueError(f"must start with one of {', '.join(SCHEMES)}")
    if is_sentinel(url):
        parse_sentinel_url(url)
    return url


def check_master(url: str, master: str | None) -> None:
    """A Sentinel URL needs the primary's name (one Redis ignores it).

    Raises:
        ValueError: a ``sentinel://`` URL without the name.
    """
    if is_sentinel(url) and not master:
        raise ValueError("WINDAGS_REDIS_SENTINEL_MASTER: a sentinel:// URL needs the master name")


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
