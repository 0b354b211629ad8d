"""The package index, asked over HTTP: does a project of this name exist?

A PEP 691 simple index (``WINDAGS_PACKAGE_INDEX_URL``): ``GET <index>/<name>/`` with the
JSON media type first. 200 is present; 404 and 410 are absent; anything else (a
redirect, 5xx, a timeout, a refused connection) is unreachable, which never makes a
finding definite. Only the status is read: the body of a large project's page is never
downloaded. A name reaches the URL only as its validated PEP 503 normal form. The
operator names the index, so its address is not a model's to choose; still no proxy from
the environment, no redirects followed, no cookies.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from datetime import UTC, datetime

import httpx2
import redis

from schemas.packages import IndexAnswer, PackageAnswer
from workers.errors import ConfigurationError
from workers.evaluate.wall.packages import PackageCheck
from workers.evaluate.wall.packages.names import checked_name
from workers.package_index.cache import AnswerCache, Lifetimes, MemoryAnswers, RedisAnswers
from workers.settings import Settings

#: PEP 691's negotiation: JSON first, the HTML of PEP 503 after.
ACCEPT = (
    "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, "
    "text/html;q=0.01"
)
USER_AGENT = "windags-evaluator (package existence check; one GET per name, cached)"
_ABSENT_STATUSES = frozenset({404, 410})
#: Most names one call asks about (the engine asks about 20 at most).
MAX_NAMES = 50


def package_check(settings: Settings) -> PackageCheck:
    """The check the settings describe, before any answer is in.

    The operator's allowlist, and whether a live index stands behind the snapshot.
    """
    return PackageCheck(
        allowed=settings.package_allowlist, live_index=bool(settings.package_index_url)
    )


class PackageIndex:
    """Looks names up on the configured index, through a cache."""

    def __init__(
        self,
        settings: Settings,
        redis_client: redis.Redis | None = None,
        *,
        transport: httpx2.BaseTransport | None = None,
    ) -> None:
        """``redis_client``: the fleet's shared cache; None: a cache of this process."""
        if not settings.package_index_url:
            raise ConfigurationError("no package index configured (WINDAGS_PACKAGE_INDEX_URL)")
        self._base = settings.package_index_url
        self._budget_s = settings.package_index_budget_s
        lifetimes = Lifetimes(settings.package_present_ttl_s, settings.package_absent_ttl_s)
        self._cache: AnswerCache = (
            RedisAnswers(redis_client, settings.keys, lifetimes)
            if redis_client is not None
            else MemoryAnswers(lifetimes)
        )
        self._timeout_s = settings.package_index_timeout_s
        self._transport = transport
        self._client: httpx2.Client | None = None

    @property
    def _http(self) -> httpx2.Client:
        """The HTTP client, built on the first look-up.

        A review that names no new package, the usual case, never pays for its TLS context.
        """
        if self._client is None:
            self._client = httpx2.Client(
                timeout=httpx2.Timeout(self._timeout_s),
                follow_redirects=False,
                trust_env=False,
                headers={"Accept": ACCEPT, "User-Agent": USER_AGENT},
                transport=self._transport,
            )
        return self._client

    def close(self) -> None:
        """Close the HTTP connections."""
        if self._client is not None:
            self._client.close()

    def lookup(self, names: Iterable[str]) -> dict[str, PackageAnswer]:
        """The index's answer for each valid normal form among ``names``.

        Kept answers first; the rest are asked one by one within the time budget, and
        a name the budget leaves no time for is unreachable. A name that is not a
        normal form gets no answer (the engine then treats it as unreachable).
        """
        wanted = sorted({n for n in names if checked_name(n) == n})[:MAX_NAMES]
        answers = self._cache.get_many(wanted)
        deadline = time.monotonic() + self._budget_s
        for name in wanted:
            if name in answers:
                continue
            if time.monotonic() >= deadline:
                answers[name] = _answer(name, IndexAnswer.UNREACHABLE, None)
                continue
            answers[name] = answer = self._ask(name)
            self._cache.put(answer)
        return answers

    def _ask(self, name: str) -> PackageAnswer:
        try:
            with self._http.stream("GET", f"{self._base}{name}/") as response:
                status = response.status_code
        except (httpx2.HTTPError, OSError):
            return _answer(name, IndexAnswer.UNREACHABLE, None)
        if status == 200:
            return _answer(name, IndexAnswer.PRESENT, status)
        if status in _ABSENT_STATUSES:
            return _answer(name, IndexAnswer.ABSENT, status)
        return _answer(name, IndexAnswer.UNREACHABLE, status)


def _answer(name: str, answer: IndexAnswer, status: int | None) -> PackageAnswer:
    return PackageAnswer(name=name, answer=answer, status=status, checked_at=datetime.now(UTC))
