"""The client against a loopback server: each row of the status table, and hostile servers.

Each bad input ends bounded (the fetch's own time budget, the body cap measured after
decompression), as a typed outcome, and the caller goes on.
"""

from __future__ import annotations

import socket
import threading
import tracemalloc
from collections.abc import Iterator

import pytest

from schemas.references import FetchOutcome
from workers.evaluate.references import outcome_of_status
from workers.lookups.addresses import AddressPolicy
from workers.lookups.client import SafeClient
from workers.lookups.transport import Limits
from workers.testing.net_guard import ConnectGuard, ScriptedResolver
from workers.testing.pages import Page, PageServer, gzip_bomb, html, redirect

from .test_ssrf import ALLOW_ONE

BODY_CAP = 256 * 1024
PAGES = {
    "/ok": html("the outage lasted forty minutes"),
    "/missing": Page(status=404),
    "/gone": Page(status=410),
    "/moved": redirect("/missing", status=301),
    **{f"/s{code}": Page(status=code) for code in (401, 403, 429, 451, 500, 503, 400)},
    "/loop": redirect("/loop-b"),
    "/loop-b": redirect("/loop"),
    **{f"/hop{i}": redirect(f"/hop{i + 1}") for i in range(7)},
    "/slow": Page(hold_s=30),
    "/drip": Page(body=b"x" * 10_000, drip_s=0.05),
    "/bomb": gzip_bomb(200 * 1024 * 1024),
    "/huge": Page(body=b"<p>a", length=5 * 1024**3),
    "/latin": Page(body=b"caf\xe9 \xff\xfe broken", content_type="text/plain"),
    "/headers": Page(headers=tuple((f"X-Pad-{i}", "v" * 1000) for i in range(100))),
    "/garbage": Page(raw=b"\x00\x01 not http at all\r\n\r\n"),
    "/encoded": Page(body=b"??", headers=(("Content-Encoding", "br"),)),
    "/pdf": Page(body=b"%PDF-1.4 the outage", content_type="application/pdf"),
}


@pytest.fixture(scope="module")
def server() -> Iterator[PageServer]:
    with PageServer(PAGES) as running:
        yield running


@pytest.fixture
def client(server: PageServer) -> SafeClient:
    guard = ConnectGuard(allowed={("127.0.0.1", server.port)})
    limits = Limits(total_s=1.5, body_bytes=BODY_CAP, header_bytes=16 * 1024)
    return SafeClient(policy=ALLOW_ONE, connect=guard, resolver=ScriptedResolver(), limits=limits)


@pytest.mark.parametrize(
    ("path", "outcome", "chain"),
    [
        ("/ok", FetchOutcome.OK, [200]),
        ("/missing", FetchOutcome.NOT_FOUND, [404]),
        ("/gone", FetchOutcome.GONE, [410]),
        ("/moved", FetchOutcome.NOT_FOUND, [301, 404]),
        ("/s401", FetchOutcome.UNAUTHORIZED, [401]),
        ("/s403", FetchOutcome.FORBIDDEN, [403]),
        ("/s429", FetchOutcome.RATE_LIMITED, [429]),
        ("/s451", FetchOutcome.LEGAL, [451]),
        ("/s500", FetchOutcome.SERVER_ERROR, [500]),
        ("/s503", FetchOutcome.SERVER_ERROR, [503]),
        ("/s400", FetchOutcome.OTHER_STATUS, [400]),
        ("/loop", FetchOutcome.TOO_MANY_REDIRECTS, [302, 302]),
        ("/hop0", FetchOutcome.TOO_MANY_REDIRECTS, [302] * 6),
    ],
)
def test_each_answer_is_its_row_with_the_status_chain(
    client: SafeClient, server: PageServer, path: str, outcome: FetchOutcome, chain: list[int]
) -> None:
    page = client.fetch(server.url(path))
    assert page.outcome is outcome, page.detail
    assert [h.status for h in page.chain] == chain
    assert {h.address for h in page.chain} == {"127.0.0.1"}
    assert page.fetched_at is not None
    assert page.requests == len(chain)


def test_a_live_page_records_its_text_hash_and_size(client: SafeClient, server: PageServer) -> None:
    page = client.fetch(server.url("/ok"))
    assert "the outage lasted forty minutes" in page.text
    assert "not text" not in page.text  # the script's contents are no page text
    assert page.complete and page.content_type == "text/html"
    assert page.content_sha256 is not None and len(page.content_sha256) == 64
    assert page.body_bytes == len(PAGES["/ok"].body)


@pytest.mark.parametrize("path", ["/slow", "/drip"])
def test_a_slow_or_dripping_server_ends_as_a_timeout(
    client: SafeClient, server: PageServer, path: str
) -> None:
    page = client.fetch(server.url(path))
    assert page.outcome is FetchOutcome.TIMEOUT
    assert page.chain[0].address == "127.0.0.1"


@pytest.mark.parametrize("path", ["/bomb", "/huge"])
def test_a_gzip_bomb_or_a_5_gb_length_is_read_up_to_the_cap_only(
    client: SafeClient, server: PageServer, path: str
) -> None:
    tracemalloc.start()
    try:
        page = client.fetch(server.url(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert page.outcome is FetchOutcome.OK
    assert page.body_bytes == BODY_CAP and not page.complete
    assert peak < 40 * BODY_CAP  # a 200 MiB bomb never inflated whole


def test_invalid_utf8_is_decoded_with_replacement(client: SafeClient, server: PageServer) -> None:
    page = client.fetch(server.url("/latin"))
    assert page.outcome is FetchOutcome.OK
    assert page.text.startswith("caf") and "broken" in page.text and "\ufffd" in page.text


@pytest.mark.parametrize("path", ["/headers", "/garbage", "/encoded"])
def test_what_is_not_a_readable_answer_is_a_bad_response(
    client: SafeClient, server: PageServer, path: str
) -> None:
    assert client.fetch(server.url(path)).outcome is FetchOutcome.BAD_RESPONSE


def test_a_page_that_is_not_text_is_live_but_not_read_whole(
    client: SafeClient, server: PageServer
) -> None:
    page = client.fetch(server.url("/pdf"))
    assert page.outcome is FetchOutcome.OK and not page.complete and page.text == ""


def test_a_refused_connection_a_tls_failure_and_nxdomain(server: PageServer) -> None:
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there now
    guard = ConnectGuard(allowed={("127.0.0.1", port), ("127.0.0.1", server.port)})
    resolver = ScriptedResolver(failing=frozenset({"flaky.invalid"}))
    client = SafeClient(policy=ALLOW_ONE, connect=guard, resolver=resolver)
    assert client.fetch(f"http://127.0.0.1:{port}/").outcome is FetchOutcome.CONNECTION_FAILED
    tls = client.fetch(f"https://127.0.0.1:{server.port}/ok")  # a plain-HTTP server
    assert tls.outcome is FetchOutcome.TLS_ERROR
    assert client.fetch("http://nowhere.invalid/").outcome is FetchOutcome.NO_SUCH_HOST
    assert client.fetch("http://flaky.invalid/").outcome is FetchOutcome.DNS_FAILED
    assert guard.attempts == [("127.0.0.1", port), ("127.0.0.1", server.port)]


def test_the_request_carries_no_credentials_cookies_or_proxy(server: PageServer) -> None:
    seen: list[bytes] = []
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        guard = ConnectGuard(allowed={("127.0.0.1", port)})
        client = SafeClient(policy=ALLOW_ONE, connect=guard, limits=Limits(total_s=2))

        def answer() -> None:
            conn, _ = listener.accept()
            with conn:
                seen.append(conn.recv(65536))
                conn.sendall(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")

        thread = threading.Thread(target=answer)
        thread.start()
        page = client.fetch(f"http://user:secret@127.0.0.1:{port}/p?q=1")
        thread.join(timeout=10)
    assert page.outcome is FetchOutcome.OK
    head = seen[0].decode("latin-1").lower()
    assert head.startswith("get /p?q=1 http/1.1")
    assert "authorization" not in head and "cookie" not in head and "secret" not in head
    assert "user-agent: windags-evaluator" in head


def test_every_status_maps_to_one_row() -> None:
    assert outcome_of_status(204) is FetchOutcome.OK
    assert outcome_of_status(418) is FetchOutcome.OTHER_STATUS
    assert outcome_of_status(599) is FetchOutcome.SERVER_ERROR
    assert outcome_of_status(304) is FetchOutcome.OTHER_STATUS


def test_no_proxy_from_the_environment_is_used(
    server: PageServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.9:1")
    monkeypatch.setenv("http_proxy", "http://127.0.0.9:1")
    guard = ConnectGuard(allowed={("127.0.0.1", server.port)})
    client = SafeClient(policy=AddressPolicy(ALLOW_ONE.allowed), connect=guard)
    assert client.fetch(server.url("/ok")).outcome is FetchOutcome.OK
    assert guard.attempts == [("127.0.0.1", server.port)]
