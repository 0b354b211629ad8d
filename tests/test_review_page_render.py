"""The review page's pieces without a server: rendering, signatures, refusing to start open."""

from __future__ import annotations

import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from starlette.requests import Request

from schemas.request import NodeOutput, OutputKind
from workers.errors import ConfigurationError
from workers.human.web.auth import CSRF_COOKIE, SESSION_COOKIE, Auth
from workers.human.web.render import render_output
from workers.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = '<script>alert(1)</script><img src=x onerror="alert(2)"> [x](javascript:alert(3))'


def rendered(kind: OutputKind, content: str = HOSTILE) -> str:
    out = render_output(NodeOutput(kind=kind, content=content))
    return str(out.html) if out.html is not None else ""


@pytest.mark.parametrize(
    "kind",
    [
        OutputKind.MARKDOWN,
        OutputKind.PYTHON,
        OutputKind.SQL,
        OutputKind.HTML,
        OutputKind.XML,
        OutputKind.YAML,
        OutputKind.SHELL,
        OutputKind.JAVASCRIPT,
    ],
)
def test_rendered_output_carries_no_live_tag_or_handler(kind: OutputKind) -> None:
    tags = Tags()
    tags.feed(rendered(kind))
    assert {"script", "img", "a", "form"}.isdisjoint(name for name, _ in tags.seen)
    assert not [k for _, attrs in tags.seen for k, _ in attrs if k.startswith("on")]
    assert "script" in tags.text and "alert(1)" in tags.text  # shown, as text


class Tags(HTMLParser):
    """The elements and attributes a browser would build from some HTML, and its text."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.text = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.seen.append((tag, attrs))

    def handle_data(self, data: str) -> None:
        self.text += data


def test_markdown_keeps_safe_links_and_drops_images() -> None:
    html = rendered(OutputKind.MARKDOWN, "[docs](https://example.org) ![x](https://e.org/t.png)")
    assert '<a href="https://example.org">docs</a>' in html
    assert "<img" not in html


def test_json_is_pretty_printed_and_invalid_json_is_left_as_text() -> None:
    html = rendered(OutputKind.JSON, '{"a": [1, 2], "b": "<b>"}')
    assert '\n<span class="w">  </span>' in html and "&lt;b&gt;" in html
    bad = render_output(NodeOutput(kind=OutputKind.JSON, content="{not json <b>"))
    assert bad.html is None and bad.text == "{not json <b>" and bad.note


def request_with(cookies: dict[str, str], headers: dict[str, str] | None = None) -> Request:
    raw = [(b"cookie", "; ".join(f"{k}={v}" for k, v in cookies.items()).encode())]
    raw += [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    return Request({"type": "http", "method": "GET", "path": "/", "headers": raw})


def session_of(auth: Auth, reviewer: str) -> str:
    from starlette.responses import Response

    response = Response()
    auth.start_session(response, reviewer)
    cookie = response.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie
    return cookie.split(";")[0].split("=", 1)[1]


def test_a_session_is_signed_and_a_tampered_one_is_nobody() -> None:
    auth = Auth.from_settings(Settings(review_ui_token="t" * 20))
    value = session_of(auth, "alice")
    assert auth.reviewer(request_with({SESSION_COOKIE: value})) == "alice"
    _, mac = value.split(".")
    forged = session_of(Auth.from_settings(Settings(review_ui_token="u" * 20)), "mallory")
    assert auth.reviewer(request_with({SESSION_COOKIE: forged})) is None
    assert auth.reviewer(request_with({SESSION_COOKIE: f"{forged.split('.')[0]}.{mac}"})) is None


def test_csrf_tokens_bind_the_cookie_and_the_reviewer() -> None:
    auth = Auth.from_settings(Settings(review_ui_token="t" * 20))
    seed = "s" * 43
    token = auth.csrf_token(seed, "alice")
    assert auth.csrf_ok(request_with({CSRF_COOKIE: seed}), token, "alice")
    assert not auth.csrf_ok(request_with({CSRF_COOKIE: seed}), token, "bob")
    assert not auth.csrf_ok(request_with({CSRF_COOKIE: "z" * 43}), token, "alice")
    assert not auth.csrf_ok(request_with({}), token, "alice")


def test_an_upstream_header_names_the_reviewer_when_configured() -> None:
    auth = Auth.from_settings(Settings(review_ui_auth_header="X-Forwarded-User"))
    assert auth.reviewer(request_with({}, {"X-Forwarded-User": "dana@example.org"})) == (
        "dana@example.org"
    )
    assert auth.reviewer(request_with({})) is None


def test_an_identity_header_is_ignored_unless_configured() -> None:
    """With a token, a client's own X-Forwarded-User (or any header) names nobody."""
    auth = Auth.from_settings(Settings(review_ui_token="t" * 20))
    for header in ("X-Forwarded-User", "X-Remote-User", "Remote-User", "X-Auth-Request-User"):
        assert auth.reviewer(request_with({}, {header: "mallory"})) is None, header
    session = session_of(auth, "alice")
    spoofed = request_with({SESSION_COOKIE: session}, {"X-Forwarded-User": "mallory"})
    assert auth.reviewer(spoofed) == "alice"  # the signed session, never the header
    proxied = Auth.from_settings(Settings(review_ui_auth_header="X-Forwarded-User"))
    assert proxied.reviewer(request_with({}, {"X-Remote-User": "mallory"})) is None


def test_the_page_never_starts_open_to_everyone() -> None:
    with pytest.raises(ConfigurationError, match="WINDAGS_REVIEW_UI_TOKEN"):
        Auth.from_settings(Settings())
    env = {k: v for k, v in os.environ.items() if not k.startswith("WINDAGS_")}
    done = subprocess.run(
        [sys.executable, "-m", "workers.local.cli", "review-ui", "--port", "0"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "WINDAGS_REVIEW_UI_TOKEN" in done.stderr
