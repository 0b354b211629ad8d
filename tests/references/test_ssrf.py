"""SSRF: a URL a model wrote never reaches what it must not, in any spelling.

Each refused URL below points at the test's own loopback server; 0 connections may be
attempted (the guard fails the test on one) and 0 requests may reach the server. Private,
link-local and other non-public ranges are only ever named by a scripted resolver: the
guard would fail the test before any packet left.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from dataclasses import replace

import pytest

from schemas.references import FetchOutcome
from workers.lookups.addresses import AddressPolicy, embedded_ipv4, literal_address
from workers.lookups.client import SafeClient
from workers.lookups.transport import Limits
from workers.testing.net_guard import (
    LOOPBACK_SPELLINGS,
    SCRIPTED_LOOPBACK,
    ConnectGuard,
    ScriptedResolver,
)
from workers.testing.pages import PageServer, html, redirect

ALLOW_ONE = AddressPolicy((ipaddress.ip_network("127.0.0.1/32"),))
NO_NETWORK_ALLOWED = AddressPolicy()


@pytest.fixture(scope="module")
def server() -> Iterator[PageServer]:
    pages = {"/": html("hello"), "/away": redirect("http://127.0.0.2:{port}/")}
    with PageServer(pages) as running:
        yield running


def _client(
    server: PageServer, policy: AddressPolicy = NO_NETWORK_ALLOWED, **answers: list[str]
) -> tuple[SafeClient, ConnectGuard, ScriptedResolver]:
    guard = ConnectGuard(allowed={("127.0.0.1", server.port)})
    resolver = ScriptedResolver(answers={k.replace("_", "."): v for k, v in answers.items()})
    client = SafeClient(policy=policy, resolver=resolver, connect=guard, limits=Limits(total_s=5))
    return client, guard, resolver


@pytest.mark.parametrize("host", LOOPBACK_SPELLINGS)
def test_loopback_in_every_spelling_is_refused_without_a_connection(
    server: PageServer, host: str
) -> None:
    client, guard, _ = _client(server)
    client = replace(client, resolver=ScriptedResolver(answers=SCRIPTED_LOOPBACK))
    before = server.requests
    page = client.fetch(server.url("/", host=host))
    assert page.outcome is FetchOutcome.REFUSED, page
    assert "127.0.0.0/8" in page.detail or "::1/128" in page.detail
    assert guard.attempts == []
    assert server.requests == before


def test_a_redirect_from_an_allowed_address_to_a_refused_one_stops_at_the_redirect(
    server: PageServer,
) -> None:
    pages = {"/away": redirect(f"http://127.0.0.2:{server.port}/")}
    with PageServer(pages) as first:
        guard = ConnectGuard(allowed={("127.0.0.1", first.port)})
        client = SafeClient(policy=ALLOW_ONE, connect=guard, resolver=ScriptedResolver())
        page = client.fetch(first.url("/away"))
    assert page.outcome is FetchOutcome.REFUSED
    assert [h.status for h in page.chain] == [302, None]
    assert guard.attempts == [("127.0.0.1", first.port)]
    assert first.hits["/away"] == 1


@pytest.mark.parametrize(
    "answers",
    [
        ["169.254.169.254"],
        ["100.64.0.1"],
        ["10.0.0.1"],
        ["172.16.0.1"],
        ["192.168.1.1"],
        ["0.0.0.0"],
        ["224.0.0.1"],
        ["240.0.0.1"],
        ["255.255.255.255"],
        ["fd00::1"],
        ["fe80::1"],
        ["ff02::1"],
        ["::"],
        ["64:ff9b::a9fe:a9fe"],  # NAT64 of 169.254.169.254
        ["2002:7f00:1::1"],  # 6to4 of 127.0.0.1
        ["2001:0:4136:e378:8000:63bf:80ff:fffe"],  # Teredo: client 127.0.0.1
        ["93.184.216.34", "127.0.0.1"],  # one bad answer refuses the name
    ],
)
def test_names_that_resolve_to_a_non_public_address_are_refused(
    server: PageServer, answers: list[str]
) -> None:
    client, guard, _ = _client(server, site_invalid=answers)
    page = client.fetch(f"http://site.invalid:{server.port}/")
    assert page.outcome is FetchOutcome.REFUSED, page.detail
    assert guard.attempts == []


def test_the_connection_goes_to_the_checked_address_and_the_name_is_resolved_once(
    server: PageServer,
) -> None:
    answers = iter([["127.0.0.1"], ["10.0.0.1"]])  # a rebinding name: the second answer differs

    class Rebinding(ScriptedResolver):
        def __call__(self, host: str, port: int):  # type: ignore[no-untyped-def]
            self.asked.append(host)
            return [ipaddress.ip_address(a) for a in next(answers)]

    guard = ConnectGuard(allowed={("127.0.0.1", server.port)})
    resolver = Rebinding()
    client = SafeClient(policy=ALLOW_ONE, resolver=resolver, connect=guard)
    page = client.fetch(f"http://rebind.invalid:{server.port}/")
    assert page.outcome is FetchOutcome.OK
    assert resolver.asked == ["rebind.invalid"]
    assert guard.attempts == [("127.0.0.1", server.port)]
    assert page.chain[0].address == "127.0.0.1"


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "gopher://127.0.0.1:70/",
        "ftp://site.invalid/x",
        "http://exa mple.invalid/",
        "http://site.invalid:99999/",
        "http://[::1/",
        "javascript:alert(1)",
    ],
)
def test_only_http_and_https_urls_are_fetched(server: PageServer, url: str) -> None:
    client, guard, resolver = _client(server)
    page = client.fetch(url)
    assert page.outcome is FetchOutcome.UNSUPPORTED, page
    assert guard.attempts == [] and resolver.asked == []


def test_the_allowlist_lets_the_operator_reach_a_network_it_trusts(server: PageServer) -> None:
    client, guard, _ = _client(server, policy=ALLOW_ONE)
    page = client.fetch(server.url("/"))
    assert page.outcome is FetchOutcome.OK
    assert guard.attempts == [("127.0.0.1", server.port)]
    assert "hello" in page.text


def test_old_ipv4_spellings_are_read_as_the_c_library_reads_them() -> None:
    spellings = ["2130706433", "0x7f000001", "0177.0.0.1", "127.1", "0x7f.1", "127.0.0.1."]
    assert {str(literal_address(s)) for s in spellings} == {"127.0.0.1"}
    assert literal_address("example.invalid") is None
    assert str(literal_address("99999999999")) == "0.0.0.0"  # no address: refused as such


def test_cgnat_is_refused_even_where_ipaddress_calls_it_neither_private_nor_global() -> None:
    cgnat = ipaddress.ip_address("100.64.0.1")
    assert not cgnat.is_private  # CVE-2024-4032: the flags alone would let it through
    assert AddressPolicy().refusal(cgnat) is not None


def test_ipv6_forms_that_carry_ipv4_are_judged_by_the_ipv4_address() -> None:
    mapped = ipaddress.IPv6Address("::ffff:8.8.8.8")
    assert embedded_ipv4(mapped) == (ipaddress.IPv4Address("8.8.8.8"),)
    assert AddressPolicy().refusal(mapped) is None
    assert AddressPolicy().refusal(ipaddress.IPv6Address("64:ff9b::808:808")) is None
    assert AddressPolicy().refusal(ipaddress.IPv6Address("64:ff9b::a00:1")) is not None
    assert AddressPolicy().refusal(ipaddress.ip_address("2606:4700::1111")) is None
