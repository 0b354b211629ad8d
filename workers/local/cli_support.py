"""What every ``windags-eval`` command shares: one-line failures, settings, input, signals.

A command that meets a Redis that does not answer, or a broker that gives up within its
bound, ends in one line naming the address and exit 1, whichever command it is: the
console script's entry point catches those errors once (``run``), so a command written
tomorrow cannot print a traceback for them. Ctrl-C and SIGTERM end a command the same way
(``KeyboardInterrupt``): its ``with`` blocks stop what it started, and it says "interrupted".
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from urllib.parse import urlsplit, urlunsplit

import redis
import typer

from workers.errors import BrokerUnavailableError, ConfigurationError
from workers.local.demo_keys import demo_settings, is_demo
from workers.settings import Settings, load_settings

#: A command ended by Ctrl-C or SIGTERM exits as a shell reports a SIGINT: 128 + 2.
INTERRUPTED_EXIT = 130


def fail(message: str, code: int = 2) -> typer.Exit:
    """Say ``error: message`` on stderr; the exit to raise (2: bad input, 1: a fault)."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def settings_or_exit() -> Settings:
    """Settings from the environment; a bad value ends the command in one line naming it.

    Under a demo's key prefix, with the demo's key lifetimes (``workers/local/demo_keys.py``).
    """
    try:
        settings = load_settings()
    except ConfigurationError as exc:
        raise fail(f"bad settings: {exc}") from None
    return demo_settings(settings) if is_demo(settings) else settings


def read_input(path: str) -> bytes:
    """The bytes of ``path``, or of stdin for ``-``."""
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise fail(f"cannot read {path}: {exc.strerror}") from None


def redis_configured() -> bool:
    """Whether the operator chose a Redis: then a fleet never swaps in a private one."""
    return bool(os.environ.get("WINDAGS_REDIS_URL"))


def shown_url(url: str) -> str:
    """``url`` with its password hidden, fit for an error line."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))


def _configured_url() -> str:
    try:
        return load_settings().redis_url
    except ConfigurationError:  # cannot happen after a command ran: it loaded them
        return os.environ.get("WINDAGS_REDIS_URL", "the configured Redis")


def _terminated(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def run(app: typer.Typer) -> None:
    """Run ``app`` as the console script: Redis faults are one line and exit 1.

    SIGTERM raises ``KeyboardInterrupt`` as Ctrl-C does, so a fleet, a demo or the review
    page stopped by a supervisor (or a test) stops its workers and servers first.
    """
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _terminated)
    try:
        app()
    except BrokerUnavailableError as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(1)
    except redis.RedisError as exc:
        where = shown_url(_configured_url())
        typer.echo(f"error: redis at {where} did not answer: {exc}", err=True)
        sys.exit(1)


@contextmanager
def interruptible() -> Iterator[None]:
    """Turn Ctrl-C (or SIGTERM) inside the block into "interrupted" and exit 130.

    The block's own ``with`` statements have stopped what they started by the time the
    interrupt reaches here.
    """
    try:
        yield
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        raise typer.Exit(INTERRUPTED_EXIT) from None
