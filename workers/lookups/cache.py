"""Fetched pages kept for reuse, and one fetch per URL at a time.

The fleet's cache is in Redis, shared by every refs worker: a URL cited by a hundred
reviews is fetched once within its cache time. While one worker fetches a URL it holds the
URL's flight key (``SET NX``); the others wait for its record instead of fetching too,
and fetch themselves only if the holder ends without leaving one (a transient answer is
never cached) or dies (the key expires). The in-process review keeps the same two things
in memory, so a batch that cites one URL thirty times fetches it once.
"""

from __future__ import annotations

import hashlib
import threading
import time
import uuid
from typing import Final, Protocol

import redis

from schemas.references import FetchedPage
from workers.keys import Keys

# KEYS: flight key. ARGV: token. Deletes the key only if this holder still holds it.
_RELEASE: Final = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


def url_digest(url: str) -> str:
    """The key of a URL in the cache (its SHA-256)."""
    return hashlib.sha256(url.encode("utf-8", "surrogatepass")).hexdigest()


class PageCache(Protocol):
    """Pages by URL, and a claim on fetching one."""

    def get(self, url: str) -> FetchedPage | None:
        """The cached record of ``url``, if any and still fresh."""
        ...

    def put(self, page: FetchedPage, ttl_s: int) -> None:
        """Keep ``page`` for ``ttl_s`` seconds."""
        ...

    def claim(self, url: str, ttl_s: float) -> str | None:
        """A token if this caller is now the one fetching ``url``; None if another is."""
        ...

    def release(self, url: str, token: str) -> None:
        """End a claim (whether or not a record was kept)."""
        ...


class RedisPageCache:
    """The fleet's cache: every refs worker reads and fills the same keys."""

    def __init__(self, client: redis.Redis, keys: Keys) -> None:
        self._redis = client
        self._keys = keys
        self._release = client.register_script(_RELEASE)

    def get(self, url: str) -> FetchedPage | None:
        """The record, if another fetch left one that has not expired."""
        raw = self._redis.get(self._keys.refs_page(url_digest(url)))
        return None if raw is None else FetchedPage.model_validate_json(raw)

    def put(self, page: FetchedPage, ttl_s: int) -> None:
        """Keep the record for ``ttl_s`` seconds."""
        self._redis.set(
            self._keys.refs_page(url_digest(page.url)), page.model_dump_json(), ex=ttl_s
        )

    def claim(self, url: str, ttl_s: float) -> str | None:
        """Hold the URL's flight key, which expires should this worker die holding it."""
        token = uuid.uuid4().hex
        held = self._redis.set(
            self._keys.refs_flight(url_digest(url)), token, nx=True, px=max(1, int(ttl_s * 1000))
        )
        return token if held else None

    def release(self, url: str, token: str) -> None:
        """Let the flight key go, unless it expired and another worker holds it now."""
        self._release(keys=[self._keys.refs_flight(url_digest(url))], args=[token])


class MemoryPageCache:
    """The in-process review's cache: the same rules, in this process only.

    At most ``max_pages`` records (a page's text is up to 400,000 characters): a long
    batch drops its oldest first.
    """

    def __init__(self, max_pages: int = 512) -> None:
        self._max_pages = max_pages
        self._pages: dict[str, tuple[float, FetchedPage]] = {}
        self._flights: dict[str, tuple[float, str]] = {}
        self._lock = threading.Lock()

    def get(self, url: str) -> FetchedPage | None:
        """The record, if still fresh."""
        with self._lock:
            kept = self._pages.get(url)
            if kept is None or kept[0] <= time.monotonic():
                return None
            return kept[1]

    def put(self, page: FetchedPage, ttl_s: int) -> None:
        """Keep ``page`` for ``ttl_s`` seconds."""
        with self._lock:
            self._pages.pop(page.url, None)
            self._pages[page.url] = (time.monotonic() + ttl_s, page)
            while len(self._pages) > self._max_pages:  # dicts keep insertion order
                del self._pages[next(iter(self._pages))]

    def claim(self, url: str, ttl_s: float) -> str | None:
        """A token unless a live claim on ``url`` is held."""
        with self._lock:
            held = self._flights.get(url)
            if held is not None and held[0] > time.monotonic():
                return None
            token = uuid.uuid4().hex
            self._flights[url] = (time.monotonic() + ttl_s, token)
            return token

    def release(self, url: str, token: str) -> None:
        """End the claim if it is still this token's."""
        with self._lock:
            held = self._flights.get(url)
            if held is not None and held[1] == token:
                del self._flights[url]
