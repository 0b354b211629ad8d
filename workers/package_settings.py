"""How the package settings are read: the index URL checked, the allowlist split.

Apart from ``settings`` so that the adapter and the settings share one spelling of the
default index and its checks, the way ``endpoint`` serves the judge settings.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

DEFAULT_PACKAGE_INDEX = "https://pypi.org/simple/"
_SEPARATORS = re.compile(r"[,\s]+")


def checked_index_url(url: str) -> str:
    """An http(s) URL with a host, ending in ``/`` (a project's page is ``<url><name>/``).

    Empty stays empty: no live index.

    Raises:
        ValueError: another scheme, no host, or a query, fragment or credentials in it.
    """
    url = url.strip()
    if not url:
        return ""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http(s) URL with a host: {url[:200]!r}")
    if parts.query or parts.fragment or parts.username or parts.password:
        raise ValueError("the index URL takes no query, fragment or credentials")
    return url if url.endswith("/") else f"{url}/"


def split_names(value: object) -> object:
    """``"acme-*, internal_tools"`` as a tuple of names; a list is kept as it is."""
    if isinstance(value, str):
        return tuple(n for n in _SEPARATORS.split(value) if n)
    return value
