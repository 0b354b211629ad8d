"""``windags-eval submit`` and the input reading it shares with ``review``.

Both commands read untrusted files; one reader words each refusal (empty, not UTF-8, not
JSON) the same way for both, and names the file. ``submit`` also names the list index of a
bad request, and says when a request was already reviewed: its review key is published
once, so enqueuing it again would produce nothing anyone could see.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from schemas.request import ReviewRequest
from workers.connections import plain_client, socket_options
from workers.errors import BrokerUnavailableError, InvalidRequest
from workers.intake import load_json, request_from_obj
from workers.settings import Settings


class InputError(InvalidRequest):
    """A file (or one request in it) that cannot be read; the reason names where."""

    def __str__(self) -> str:
        return self.reason


def read_json(name: str, raw: bytes, *, max_bytes: int) -> Any:
    """The JSON value in ``raw``, refused in the words both commands use.

    Raises:
        InputError: ``<name>: empty``, ``<name>: not UTF-8 (byte n)``, ``<name>: not JSON: ...``.
    """
    if not raw.strip():
        raise InputError("", f"{name}: empty (no JSON in it)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError("", f"{name}: not UTF-8 (byte {exc.start})") from None
    try:
        return load_json(text, max_bytes=max_bytes)
    except InvalidRequest as exc:
        raise InputError(exc.field, f"{name}: {exc.reason}") from None


def requests_in(name: str, body: Any, settings: Settings) -> list[ReviewRequest]:
    """Every request in one file's value (one request, or a list), validated.

    Raises:
        InputError: naming the file, the list index (``a.json[3]``) and the field.
    """
    items = body if isinstance(body, list) else [body]
    if not items:
        raise InputError("", f"{name}: an empty list (no request in it)")
    validated = []
    for index, item in enumerate(items):
        where = f"{name}[{index}]" if isinstance(body, list) else name
        try:
            validated.append(
                request_from_obj(
                    item,
                    max_request_bytes=settings.max_request_bytes,
                    max_output_chars=settings.max_output_chars,
                )
            )
        except InvalidRequest as exc:
            raise InputError(exc.field, f"{where}: invalid request: {exc}") from None
    return validated


@dataclass(frozen=True)
class Submitted:
    """What ``submit`` did: the keys it enqueued, and those already reviewed."""

    enqueued: list[str]
    already_reviewed: list[str]


def check_bound_s(settings: Settings) -> float:
    """The longest the "already reviewed?" read waits on a Redis that does not answer.

    One try (no retry: it is a read the CLI can do again), a connect and a reply.
    """
    return settings.redis_connect_timeout_s + settings.redis_socket_timeout_s


def submit_requests(settings: Settings, requests: list[ReviewRequest]) -> Submitted:
    """Enqueue the requests whose review key is not on its stream yet.

    Waits at most ``check_bound_s`` for the check, then ``ReviewClient.submit_bound_s``
    for the submission: the CLI's bound, which docs/explanation/reliability.md states.

    Raises:
        BrokerUnavailableError: Redis did not answer within the bound; the message says
            how long it waited and the bound.
    """
    from workers.client import ReviewClient

    started = time.monotonic()
    client = ReviewClient(settings)
    bound_s = check_bound_s(settings) + client.submit_bound_s
    checker = plain_client(settings, **socket_options(settings), retry=Retry(NoBackoff(), 0))
    try:
        done = _published(checker, settings, [r.review_key for r in requests])
        fresh = [r for r in requests if r.review_key not in done]
        return Submitted(client.submit_many(fresh) if fresh else [], done)
    except BrokerUnavailableError as exc:
        waited_s = time.monotonic() - started
        raise BrokerUnavailableError(
            f"{exc} (gave up after {waited_s:.1f} s; bound {bound_s:.0f} s)"
        ) from exc
    finally:
        checker.close()
        client.close()


def _published(client: redis.Redis, settings: Settings, review_keys: list[str]) -> list[str]:
    """The review keys whose result is already on their stream (one round trip)."""
    pipe = client.pipeline(transaction=False)
    for key in review_keys:
        pipe.exists(settings.keys.published(key))
    try:
        found = pipe.execute()
    except (redis.RedisError, OSError) as exc:
        raise BrokerUnavailableError(f"broker at {settings.redis_url} unavailable: {exc}") from exc
    return [key for key, exists in zip(review_keys, found, strict=True) if exists]
