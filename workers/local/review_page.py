"""Serving the review page locally: for ``review-ui`` and ``demo --ui``."""

from __future__ import annotations

import secrets
import socket
from collections.abc import Callable

import uvicorn
from pydantic import SecretStr

from workers.settings import Settings


def with_demo_token(settings: Settings) -> tuple[Settings, str | None]:
    """``settings`` with a fresh reviewer token when none is set (a local demo's page).

    Returns the token to print, or None when the operator configured sign-in.
    """
    if settings.review_ui_token is not None or settings.review_ui_auth_header is not None:
        return settings, None
    token = secrets.token_urlsafe(18)
    return settings.model_copy(update={"review_ui_token": SecretStr(token)}), token


def sign_in_hint(settings: Settings) -> str:
    """How a reviewer gets in, in one line (the token itself is never printed here)."""
    if settings.review_ui_auth_header is not None:
        return (
            f"reviewers come through your authenticating proxy, which names them in the "
            f"{settings.review_ui_auth_header} header; open the page through it"
        )
    return "sign in with your name and the token set in WINDAGS_REVIEW_UI_TOKEN"


class _Server(uvicorn.Server):
    """uvicorn's server, saying where it listens once the socket is bound."""

    def __init__(self, config: uvicorn.Config, on_listening: Callable[[str], None]) -> None:
        super().__init__(config)
        self._on_listening = on_listening

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        """Bind, then tell ``on_listening`` the page's address (the real port for 0)."""
        await super().startup(sockets)
        if self.started and self.servers and self.servers[0].sockets:
            host, port = self.servers[0].sockets[0].getsockname()[:2]
            self._on_listening(f"http://{host}:{port}/")


def serve(
    settings: Settings,
    *,
    host: str,
    port: int,
    announce: Callable[[str], None] | None = None,
) -> None:
    """Run the page until Ctrl-C or SIGTERM (uvicorn handles both and shuts down cleanly).

    ``announce``: told, once the page listens, its address and how reviewers sign in.

    Raises:
        ConfigurationError: no reviewer token and no auth header configured.
    """
    from workers.human.web import create_app

    app = create_app(settings)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", server_header=False)

    def listening(address: str) -> None:
        if announce is not None:
            announce(f"review page on {address} ({sign_in_hint(settings)}); Ctrl-C stops it")

    _Server(config, listening).run()
