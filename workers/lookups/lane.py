"""The network lane: one review's look-ups, within its cap and time budget.

For each planned URL: the cache first; else a claim on fetching it (another worker's
fetch of the same URL is waited for, not repeated); then a request when the host's
politeness gate admits one, through the SSRF-safe client. A definite answer (404, 410,
NXDOMAIN) is asked again before it counts. What the time budget leaves undone is
``unverified``, never an error. The fleet's refs workers build the lane on Redis; the
in-process review on memory (``Lane.build(settings, None)``).
"""

from __future__ import annotations

import contextvars
import ipaddress
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from urllib.parse import urlsplit

import redis

from schemas.references import CitedUrl, FetchedPage, FetchOutcome, LookupAnswers, LookupPlan
from workers.evaluate.references import Caching, caching_of
from workers.evaluate.references.statuses import needs_confirmation
from workers.keys import Keys
from workers.lookups.addresses import AddressPolicy
from workers.lookups.cache import MemoryPageCache, PageCache, RedisPageCache
from workers.lookups.client import SafeClient
from workers.lookups.politeness import POLL_S, HostGate, MemoryHostGate, RedisHostGate
from workers.lookups.transport import Limits
from workers.observe import spans
from workers.package_index import PackageIndex
from workers.settings import Settings

#: URLs of one review fetched at once (each host still admits only its own limit).
PER_REVIEW = 4


@dataclass(frozen=True)
class Lane:
    """Looks up what a plan names; thread- and greenlet-safe, built once per process."""

    client: SafeClient
    cache: PageCache
    gate: HostGate
    budget_s: float
    ttl_s: dict[Caching, int]
    index: PackageIndex | None = None
    """The package index (``workers.package_index``); None when none is configured."""
    clock: Callable[[], float] = time.monotonic

    @classmethod
    def build(cls, settings: Settings, client: redis.Redis | None, **overrides: object) -> Lane:
        """The lane ``settings`` describe: on ``client``'s Redis, or in memory when None.

        ``overrides``: fields of the ``SafeClient`` (a test's resolver and connect guard).
        """
        limits = Limits(
            connect_s=settings.refs_connect_timeout_s,
            total_s=settings.refs_fetch_timeout_s,
            header_bytes=settings.refs_max_header_bytes,
            body_bytes=settings.refs_max_body_bytes,
            max_redirects=settings.refs_max_redirects,
        )
        fetcher = SafeClient(
            policy=AddressPolicy(settings.refs_allow_networks),
            limits=limits,
            user_agent=settings.refs_user_agent,
            **overrides,  # type: ignore[arg-type]
        )
        in_flight, spacing_s = settings.refs_host_in_flight, settings.refs_host_spacing_s
        cap_s = settings.refs_retry_after_cap_s
        cache: PageCache
        gate: HostGate
        if client is None:
            cache = MemoryPageCache()
            gate = MemoryHostGate(in_flight=in_flight, spacing_s=spacing_s, retry_after_cap_s=cap_s)
        else:
            keys: Keys = settings.keys
            cache = RedisPageCache(client, keys)
            gate = RedisHostGate(
                client,
                keys,
                in_flight=in_flight,
                spacing_s=spacing_s,
                retry_after_cap_s=cap_s,
                lease_s=2 * limits.total_s,
            )
        ttl = {
            Caching.LIVE: settings.refs_cache_live_s,
            Caching.DEAD: settings.refs_cache_dead_s,
            Caching.NEVER: 0,
        }
        index = PackageIndex(settings, client) if settings.package_index_url else None
        return cls(fetcher, cache, gate, settings.refs_budget_s, ttl, index)

    def close(self) -> None:
        """Close the package index's HTTP connections (the fetcher keeps none open)."""
        if self.index is not None:
            self.index.close()

    def run(self, plan: LookupPlan) -> LookupAnswers:
        """Every planned URL and package name looked up, within the time budget.

        The index is asked beside the fetches; its own budget bounds it.
        """
        deadline = self.clock() + self.budget_s
        workers = min(PER_REVIEW, len(plan.urls)) + 1
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="refs") as pool:
            names = None
            if plan.packages and self.index is not None:
                names = pool.submit(
                    contextvars.copy_context().run, self.index.lookup, plan.packages
                )
            futures = [
                pool.submit(contextvars.copy_context().run, self.look_up, cited, deadline)
                for cited in plan.urls
            ]
            pages = tuple(f.result() for f in futures)
            packages = names.result() if names is not None else None
        return LookupAnswers(pages=pages, packages=packages)

    def look_up(self, cited: CitedUrl, deadline: float) -> FetchedPage:
        """One URL: from the cache, another worker's fetch, or requests of its own."""
        with spans.fetch_span(cited.url) as opened:
            page, source = self._look_up(cited.url, deadline)
            spans.note_fetch(opened, page, source=source)
            return page

    def _look_up(self, url: str, deadline: float) -> tuple[FetchedPage, str]:
        while True:
            kept = self.cache.get(url)
            if kept is not None:
                return kept.model_copy(update={"cached": True, "requests": 0}), "cache"
            if self.clock() >= deadline:
                return _unverified(url, "the review's time budget for look-ups ran out"), "none"
            token = self.cache.claim(url, ttl_s=2 * self.client.limits.total_s + 5)
            if token is None:  # another worker fetches it: wait for its record
                if self._await_record(url, deadline):
                    continue
                return _unverified(url, "another fetch of it outlasted the time budget"), "none"
            try:
                # A fetch that ended between the look above and this claim left its record.
                kept = self.cache.get(url)
                if kept is not None:
                    return kept.model_copy(update={"cached": True, "requests": 0}), "cache"
                page = self._fetch_confirmed(url, deadline)
                ttl = self.ttl_s[caching_of(page.outcome, confirmed=page.confirmed)]
                if ttl > 0:
                    self.cache.put(page.model_copy(update={"requests": 0}), ttl)
                return page, "own"
            finally:
                self.cache.release(url, token)

    def _await_record(self, url: str, deadline: float) -> bool:
        """Wait until the URL's record appears or its claim ends; False at the deadline."""
        while self.clock() < deadline:
            if self.cache.get(url) is not None:
                return True
            token = self.cache.claim(url, ttl_s=0.001)
            if token is not None:  # the holder is gone, leaving no record: fetch it
                self.cache.release(url, token)
                return True
            time.sleep(POLL_S * 2)
        return False

    def _fetch_confirmed(self, url: str, deadline: float) -> FetchedPage:
        first = self._fetch_politely(url, deadline)
        if not needs_confirmation(first.outcome):
            return first
        second = self._fetch_politely(url, deadline)
        confirmed = needs_confirmation(second.outcome)
        return second.model_copy(
            update={"confirmed": confirmed, "requests": first.requests + second.requests}
        )

    def _fetch_politely(self, url: str, deadline: float) -> FetchedPage:
        host = _host_of(url)
        if host is None:  # the client names what is wrong with it, without a request
            return self.client.fetch(url, deadline=deadline)
        ticket = self.gate.enter(host, deadline=deadline)
        if ticket is None:
            return _unverified(url, f"{host} had no free slot within the time budget")
        page: FetchedPage | None = None
        started = self.clock()
        try:
            page = self.client.fetch(url, deadline=deadline)
            if (
                page.outcome is FetchOutcome.TIMEOUT
                and deadline < started + self.client.limits.total_s
            ):
                # The review's budget, not the site, cut the fetch short: not looked at.
                page = _unverified(url, "the review's time budget ran out during the fetch")
            return page
        finally:
            retry = page.retry_after_s if page is not None else None
            self.gate.leave(host, ticket, retry_after_s=retry)


def _host_of(url: str) -> str | None:
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return None
    if not host:
        return None
    try:  # one host, however its address is spelled
        return str(ipaddress.ip_address(host))
    except ValueError:
        return host.rstrip(".").lower()


def _unverified(url: str, detail: str) -> FetchedPage:
    return FetchedPage(url=url, outcome=FetchOutcome.UNVERIFIED, detail=detail)
