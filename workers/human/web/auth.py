"""Who may review, and proof that a form came from our own page.

Two ways in, both from settings: a shared token (the reviewer signs in with it and a
name, and gets a signed session cookie), or a header an authenticating proxy sets to
the user's identity. Every form carries a CSRF token: an HMAC over a random cookie and
the reviewer's name (the signed double-submit pattern), so a page on another site can
neither read nor forge it. Cookies are HttpOnly and SameSite=Strict.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import re
import secrets
import time
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response

from workers.errors import ConfigurationError
from workers.settings import Settings

SESSION_COOKIE = "windags_review_session"
CSRF_COOKIE = "windags_review_csrf"
SESSION_S = 8 * 3600
_NAME = re.compile(r"^[^\x00-\x1f\x7f]{1,200}$")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def valid_name(name: str | None) -> str | None:
    """``name`` stripped when it is a usable reviewer identity, else None."""
    cleaned = (name or "").strip()
    return cleaned if _NAME.match(cleaned) else None


@dataclass(frozen=True, slots=True)
class Auth:
    """The page's sign-in and CSRF rules, from settings."""

    token: str | None
    header: str | None
    secret: bytes
    secure_cookie: bool

    @classmethod
    def from_settings(cls, settings: Settings) -> Auth:
        """Refuses to build without a token or a header: the page is never open to all."""
        token = settings.review_ui_token.get_secret_value() if settings.review_ui_token else None
        header = settings.review_ui_auth_header
        if token is None and header is None:
            raise ConfigurationError(
                "the review page needs WINDAGS_REVIEW_UI_TOKEN (a shared reviewer token) or "
                "WINDAGS_REVIEW_UI_AUTH_HEADER (the header an authenticating proxy sets)"
            )
        if settings.review_ui_secret is not None:
            secret = settings.review_ui_secret.get_secret_value().encode()
        elif token is not None:
            secret = hashlib.sha256(b"windags-review-ui|" + token.encode()).digest()
        else:
            secret = os.urandom(32)
        return cls(token, header, secret, settings.review_ui_secure_cookie)

    def _mac(self, message: str) -> str:
        return _b64(hmac.new(self.secret, message.encode(), hashlib.sha256).digest())

    def reviewer(self, request: Request) -> str | None:
        """The signed-in reviewer: the proxy's header, else a valid session cookie."""
        if self.header is not None and self.header in request.headers:
            return valid_name(request.headers[self.header])
        raw = request.cookies.get(SESSION_COOKIE, "")
        body, _, mac = raw.partition(".")
        if not body or not hmac.compare_digest(mac, self._mac(f"session|{body}")):
            return None
        try:
            session = json.loads(_unb64(body))
        except ValueError:
            return None
        if not isinstance(session, dict) or session.get("exp", 0) < time.time():
            return None
        return valid_name(session.get("reviewer"))

    def token_matches(self, given: str) -> bool:
        """Constant-time comparison with the shared token."""
        return self.token is not None and hmac.compare_digest(given.encode(), self.token.encode())

    def start_session(self, response: Response, reviewer: str) -> None:
        """Sign ``reviewer`` in on ``response``."""
        body = _b64(json.dumps({"reviewer": reviewer, "exp": time.time() + SESSION_S}).encode())
        self._cookie(response, SESSION_COOKIE, f"{body}.{self._mac(f'session|{body}')}")

    def end_session(self, response: Response) -> None:
        """Sign out."""
        response.delete_cookie(SESSION_COOKIE, path="/")

    def csrf_seed(self, request: Request) -> tuple[str, bool]:
        """The request's CSRF cookie value, and whether it is new (to be set)."""
        seed = request.cookies.get(CSRF_COOKIE, "")
        if re.fullmatch(r"[A-Za-z0-9_-]{32,64}", seed):
            return seed, False
        return secrets.token_urlsafe(32), True

    def csrf_token(self, seed: str, reviewer: str) -> str:
        """The form token for ``reviewer`` under the CSRF cookie ``seed``."""
        return self._mac(f"csrf|{seed}|{reviewer}")

    def csrf_ok(self, request: Request, given: str, reviewer: str) -> bool:
        """Whether a posted form's token matches the cookie and the reviewer."""
        seed = request.cookies.get(CSRF_COOKIE, "")
        if not seed or not given:
            return False
        return hmac.compare_digest(given, self.csrf_token(seed, reviewer))

    def set_csrf(self, response: Response, seed: str) -> None:
        """Set the CSRF cookie on ``response``."""
        self._cookie(response, CSRF_COOKIE, seed)

    def _cookie(self, response: Response, name: str, value: str) -> None:
        response.set_cookie(
            name,
            value,
            max_age=SESSION_S,
            path="/",
            httponly=True,
            samesite="strict",
            secure=self.secure_cookie,
        )
