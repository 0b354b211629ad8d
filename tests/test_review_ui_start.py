"""``windags-eval review-ui`` as an operator starts it, and the page while its Redis is down.

It says where it listens and how reviewers sign in (it printed nothing); ``/healthz``
answers 503 while Redis does not (it said "ok"), ``/livez`` stays 200 for the liveness
probe, and a page says so in one sentence (it was a bare 500 "Internal Server Error").
"""

from __future__ import annotations

import re
import selectors
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from tests.console_script import NOTHING_LISTENS, ROOT, clean_env, script, stop
from tests.infrastructure import require_redis_server
from workers.local.redis_server import PrivateRedis

TOKEN = "a-reviewer-token-of-32-characters"
PROXIED = {
    "WINDAGS_REVIEW_UI_AUTH_HEADER": "X-Forwarded-User",
    "WINDAGS_REDIS_URL": NOTHING_LISTENS,
}
ADDRESS = re.compile(r"review page on (http://127\.0\.0\.1:\d+/) \((.*)\)")


def _first_line(process: subprocess.Popen[str], timeout_s: float = 60.0) -> str:
    """The first line the process prints, waiting at most ``timeout_s``."""
    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        if not selector.select(timeout_s):
            pytest.fail(f"review-ui printed nothing in {timeout_s:.0f} s")
    return process.stdout.readline()


@contextmanager
def review_ui(**env: str) -> Iterator[tuple[str, str]]:
    """The page in its own process on a port it picks; (its address, its sign-in hint)."""
    process = subprocess.Popen(
        [script(), "review-ui", "--port", "0"],
        cwd=ROOT,
        env=clean_env(**env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = _first_line(process)
        found = ADDRESS.search(line)
        exited = process.poll() is not None and process.stderr is not None
        assert found, line + (process.stderr.read() if exited and process.stderr else "")
        yield found.group(1), found.group(2)
    finally:
        stop(process)
        assert process.stdout is not None and process.stderr is not None
        process.stdout.close()
        process.stderr.close()


def _get(url: str, **headers: str) -> tuple[int, str]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as refused:
        with refused:
            return refused.code, refused.read().decode()


def test_it_prints_its_address_and_how_to_sign_in_with_a_token() -> None:
    with review_ui(WINDAGS_REVIEW_UI_TOKEN=TOKEN, WINDAGS_REDIS_URL=NOTHING_LISTENS) as (url, how):
        assert "WINDAGS_REVIEW_UI_TOKEN" in how and "name" in how
        assert TOKEN not in how  # an operator's secret is never echoed
        assert _get(f"{url}livez") == (200, "ok")


def test_with_a_token_a_client_sent_identity_header_signs_nobody_in() -> None:
    with review_ui(WINDAGS_REVIEW_UI_TOKEN=TOKEN, WINDAGS_REDIS_URL=NOTHING_LISTENS) as (url, _):
        no_redirects = urllib.request.build_opener(_NoRedirect)
        request = urllib.request.Request(url, headers={"X-Forwarded-User": "mallory"})
        try:
            no_redirects.open(request, timeout=10)
            pytest.fail("the queue page opened for a header nobody configured")
        except urllib.error.HTTPError as refused:
            with refused:
                assert (refused.code, refused.headers["location"]) == (303, "/login")


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def test_behind_a_proxy_it_names_the_header_the_proxy_sets() -> None:
    env = {
        "WINDAGS_REVIEW_UI_AUTH_HEADER": "X-Forwarded-User",
        "WINDAGS_REDIS_URL": NOTHING_LISTENS,
    }
    with review_ui(**env) as (_, how):
        assert "X-Forwarded-User" in how and "proxy" in how


def test_with_redis_down_healthz_is_503_and_a_page_says_so_in_one_sentence() -> None:
    env = {
        "WINDAGS_REVIEW_UI_AUTH_HEADER": "X-Forwarded-User",
        "WINDAGS_REDIS_URL": NOTHING_LISTENS,
    }
    with review_ui(**env) as (url, _):
        assert _get(f"{url}healthz") == (503, "redis unavailable")
        assert _get(f"{url}livez") == (200, "ok")
        for path in ("", "review/dag-1:node-1:1"):
            status, body = _get(f"{url}{path}", **{"X-Forwarded-User": "dana"})
            assert status == 503, body
            assert "its Redis does not answer" in body and "Internal Server Error" not in body


def test_healthz_follows_redis_as_it_stops_and_starts_again() -> None:
    require_redis_server()
    server = PrivateRedis().start()
    try:
        with review_ui(WINDAGS_REVIEW_UI_TOKEN=TOKEN, WINDAGS_REDIS_URL=server.url) as (url, _):
            assert _get(f"{url}healthz") == (200, "ok")
            server.stop()
            assert _get(f"{url}healthz") == (503, "redis unavailable")
            server.start()
            deadline = time.monotonic() + 30  # the pool's dead connection is replaced
            while _get(f"{url}healthz")[0] != 200:
                assert time.monotonic() < deadline, "healthz stayed 503 after Redis came back"
                time.sleep(0.2)
    finally:
        server.close()
