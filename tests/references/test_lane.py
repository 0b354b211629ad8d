"""The lane's cache, single flight and per-host politeness, on real Redis and in memory.

Concurrency is made with threads that look up at once, as greenlets of a refs worker (or
several workers) would; what is counted is what reached the loopback server.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from schemas.references import CitedUrl, FetchedPage, FetchOutcome, LookupPlan
from tests.infrastructure import leased_database
from workers.lookups.cache import MemoryPageCache, url_digest
from workers.lookups.lane import Lane
from workers.lookups.politeness import HostGate, MemoryHostGate, RedisHostGate
from workers.settings import Settings
from workers.testing.net_guard import ConnectGuard, ScriptedResolver, all_at_once
from workers.testing.pages import Page, PageServer, html

PAGES = {
    "/shared": html("one page for everyone", status=200),
    "/held": Page(body=b"<p>held</p>", hold_s=0.3),
    **{f"/p{i}": Page(body=b"<p>x</p>", hold_s=0.2) for i in range(8)},
    "/flaky": Page(status=503),
    "/missing": Page(status=404),
}


@pytest.fixture(scope="module")
def server() -> Iterator[PageServer]:
    with PageServer(PAGES) as running:
        yield running


@pytest.fixture(scope="module")
def client() -> Iterator[redis.Redis]:
    db = redis.Redis.from_url(leased_database("redis://127.0.0.1:6379/13"))
    yield db
    db.close()


def lane(server: PageServer, db: redis.Redis | None, prefix: str, **changes: Any) -> Lane:
    values: dict[str, Any] = {
        "refs_fetch": True,
        "refs_allow_networks": (ipaddress.ip_network("127.0.0.1/32"),),
        "refs_host_spacing_s": 0.0,
        "key_prefix": prefix,
        "package_index_url": "",  # no package index: only loopback pages are asked
    }
    chosen = Settings(**{**values, **changes})
    guard = ConnectGuard(allowed={("127.0.0.1", server.port)})
    return Lane.build(chosen, db, connect=guard, resolver=ScriptedResolver())


@pytest.mark.parametrize("backend", ["redis", "memory"])
def test_twenty_lookups_of_one_url_at_once_fetch_it_once(
    server: PageServer, client: redis.Redis, backend: str
) -> None:
    path = "/held"
    prefix = f"lane-{uuid.uuid4().hex[:8]}"
    shared = lane(server, client if backend == "redis" else None, prefix)
    # Several workers: each its own lane object on the same keys (redis), or one process.
    lanes = [lane(server, client, prefix) for _ in range(4)] if backend == "redis" else [shared]
    before = server.hits[path]
    cited = CitedUrl(url=server.url(path))
    pages = all_at_once(20, lambda i: lanes[i % len(lanes)].look_up(cited, time.monotonic() + 30))
    assert {p.outcome for p in pages} == {FetchOutcome.OK}
    assert server.hits[path] - before == 1
    assert sum(p.requests for p in pages) == 1
    assert sum(1 for p in pages if p.cached) == 19


@pytest.mark.parametrize("backend", ["redis", "memory"])
class _FinishedMeanwhile(MemoryPageCache):
    """A cache in which another worker's fetch of the URL ends just before this claim."""

    def __init__(self, page: FetchedPage) -> None:
        super().__init__()
        self._page = page

    def claim(self, url: str, ttl_s: float) -> str | None:
        self.put(self._page, 3600)  # its record lands, and its claim is gone
        return super().claim(url, ttl_s)


def test_a_fetch_that_ends_between_the_look_and_the_claim_is_not_made_again(
    server: PageServer,
) -> None:
    url = server.url("/shared")
    done = FetchedPage(url=url, outcome=FetchOutcome.OK, requests=1)
    racing = dataclasses.replace(lane(server, None, "race"), cache=_FinishedMeanwhile(done))
    before = server.hits["/shared"]
    page = racing.look_up(CitedUrl(url=url), time.monotonic() + 30)
    assert page.cached and page.requests == 0
    assert server.hits["/shared"] == before


@pytest.mark.parametrize("backend", ["redis", "memory"])
def test_at_most_two_requests_are_in_flight_to_one_host(client: redis.Redis, backend: str) -> None:
    with PageServer(PAGES) as own:
        prefix = f"lane-{uuid.uuid4().hex[:8]}"
        lanes = [lane(own, client if backend == "redis" else None, prefix) for _ in range(4)]
        if backend == "memory":
            lanes = lanes[:1]
        plan_urls = [CitedUrl(url=own.url(f"/p{i}")) for i in range(8)]
        all_at_once(8, lambda i: lanes[i % len(lanes)].look_up(plan_urls[i], time.monotonic() + 30))
        assert sum(own.hits[f"/p{i}"] for i in range(8)) == 8
        assert own.max_in_flight == 2


def test_a_cached_page_is_answered_without_the_network_and_a_transient_is_not_kept(
    server: PageServer, client: redis.Redis
) -> None:
    prefix = f"lane-{uuid.uuid4().hex[:8]}"
    first = lane(server, client, prefix)
    plan = LookupPlan(
        urls=(CitedUrl(url=server.url("/shared")), CitedUrl(url=server.url("/flaky")))
    )
    before = dict(server.hits)
    first.run(plan)
    again = lane(server, client, prefix).run(plan)
    shared, flaky = again.pages
    assert shared.cached and shared.requests == 0
    assert server.hits["/shared"] - before.get("/shared", 0) == 1
    assert not flaky.cached and server.hits["/flaky"] - before.get("/flaky", 0) == 2


def test_a_definite_answer_is_asked_twice_then_kept_for_its_shorter_time(
    server: PageServer, client: redis.Redis
) -> None:
    prefix = f"lane-{uuid.uuid4().hex[:8]}"
    plan = LookupPlan(urls=(CitedUrl(url=server.url("/missing")),))
    before = server.hits["/missing"]
    (page,) = lane(server, client, prefix, refs_cache_dead_s=120).run(plan).pages
    assert page.outcome is FetchOutcome.NOT_FOUND and page.confirmed and page.requests == 2
    (again,) = lane(server, client, prefix).run(plan).pages
    assert again.cached and server.hits["/missing"] - before == 2
    ttl = client.ttl(Settings(key_prefix=prefix).keys.refs_page(url_digest(server.url("/missing"))))
    assert 0 < ttl <= 120


def test_retry_after_keeps_the_fleet_off_the_host_up_to_the_cap(client: redis.Redis) -> None:
    prefix = f"lane-{uuid.uuid4().hex[:8]}"
    keys = Settings(key_prefix=prefix).keys
    gates: list[HostGate] = [
        RedisHostGate(client, keys, in_flight=2, spacing_s=0, retry_after_cap_s=60, lease_s=30),
        MemoryHostGate(in_flight=2, spacing_s=0, retry_after_cap_s=60),
    ]
    for gate in gates:
        ticket = gate.enter("busy.invalid", deadline=time.monotonic() + 5)
        assert ticket is not None
        gate.leave("busy.invalid", ticket, retry_after_s=3600)  # capped at 60 s
        assert gate.enter("busy.invalid", deadline=time.monotonic() + 0.3) is None
        assert gate.enter("other.invalid", deadline=time.monotonic() + 5) is not None
    assert 0 < client.pttl(keys.refs_host_next("busy.invalid")) <= 60_000


def test_a_spent_budget_leaves_the_rest_unverified(server: PageServer) -> None:
    plan = LookupPlan(urls=tuple(CitedUrl(url=server.url(f"/p{i}")) for i in range(4)))
    pages = (
        lane(server, None, "unused", refs_budget_s=0.001, refs_fetch_timeout_s=1).run(plan).pages
    )
    assert {p.outcome for p in pages} == {FetchOutcome.UNVERIFIED}


def test_the_in_process_cache_keeps_at_most_its_size() -> None:
    cache = MemoryPageCache(max_pages=3)
    for i in range(5):
        cache.put(FetchedPage(url=f"http://127.0.0.1/{i}", outcome=FetchOutcome.OK), 60)
    assert [cache.get(f"http://127.0.0.1/{i}") is not None for i in range(5)] == [
        False,
        False,
        True,
        True,
        True,
    ]
