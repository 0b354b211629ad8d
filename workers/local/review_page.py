"""Serving the review page locally: for ``review-ui`` and ``demo --ui``."""

from __future__ import annotations

import secrets

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


def serve(settings: Settings, *, host: str, port: int) -> None:
    """Run the page until Ctrl-C (uvicorn handles the signal and shuts down cleanly).

    Raises:
        ConfigurationError: no reviewer token and no auth header configured.
    """
    from workers.human.web import create_app

    app = create_app(settings)
    uvicorn.run(app, host=host, port=port, log_level="warning", server_header=False)
