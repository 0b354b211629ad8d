"""The one retry layer for model calls, and the map from SDK errors to our error tree.

The SDK's own retries are off (``max_retries=0``); tenacity retries only transient faults
(429, 529, 5xx, 408/409, connection errors, timeouts, garbled replies) within a bounded
number of attempts and a bounded total time, honouring ``retry-after``. Everything else
fails fast.

A garbled reply (a 200 whose body is not JSON, or JSON that is not a message) is a
provider fault, not a verdict: the SDK lets some of those escape as ``json`` or
``UnicodeDecodeError`` and returns others as a bare ``str``/``list``/``None`` or a
half-built ``Message``. ``checked_message`` and ``GARBLED`` catch all of them here, so
they end as ``JudgeRetryableError`` (the layer is indeterminate), never as a crash.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, TypeVar

import anthropic
from anthropic.types import Message
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    stop_before_delay,
)

from workers.errors import (
    ConfigurationError,
    JudgeError,
    JudgeRetryableError,
    JudgeTerminalError,
)
from workers.settings import Settings

T = TypeVar("T")

_RETRYABLE_STATUS = frozenset({408, 409, 429})
_NO_RETRY_CODES = frozenset(
    {
        "enforced_spend_limit_reached",
        "contract_spend_limit_reached",
        "linked_organization_spend_limit_reached",
    }
)


class GarbledResponse(Exception):
    """A reply that arrived but is not a Messages API message (SDK did not catch it)."""


#: Response-parsing failures: the SDK raises the json/unicode ones raw, not as its own.
GARBLED: tuple[type[BaseException], ...] = (
    GarbledResponse,
    anthropic.APIResponseValidationError,
    json.JSONDecodeError,
    UnicodeDecodeError,
)
#: What ``call_with_retry`` maps to the judge error tree: SDK errors and garbled replies.
_MAPPED: tuple[type[BaseException], ...] = (anthropic.AnthropicError, *GARBLED)


def _is_count(value: object, *, optional: bool = False) -> bool:
    return (value is None and optional) or (isinstance(value, int) and not isinstance(value, bool))


def checked_message(reply: object) -> Message:
    """``reply`` when it is shaped like a message the judge can read, else ``GarbledResponse``.

    Non-strict SDK parsing returns a non-JSON body as ``str`` and builds a ``Message``
    from any JSON object, missing fields and all; what the judge reads is checked here.
    """
    if not isinstance(reply, Message):
        raise GarbledResponse(f"the reply body is a {type(reply).__name__}, not a message")
    content: Any = reply.content
    if not isinstance(content, list) or not all(
        isinstance(getattr(block, "type", None), str) for block in content
    ):
        raise GarbledResponse("the reply's content is not a list of typed blocks")
    usage: Any = reply.usage
    if usage is None or not (
        _is_count(getattr(usage, "input_tokens", None))
        and _is_count(getattr(usage, "output_tokens", None))
        and _is_count(getattr(usage, "cache_read_input_tokens", None), optional=True)
        and _is_count(getattr(usage, "cache_creation_input_tokens", None), optional=True)
    ):
        raise GarbledResponse("the reply's usage is missing or not token counts")
    return reply


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long one judging call may retry transient faults.

    Attributes:
        max_attempts: HTTP calls per logical call, the first included.
        budget_s: no retry starts once it would sleep past this many seconds.
        base_delay_s: first backoff; doubles each retry, with full jitter.
        max_delay_s: cap of one exponential backoff.
        max_retry_after_s: cap on a server's ``retry-after`` we are willing to wait.
    """

    max_attempts: int
    budget_s: float
    base_delay_s: float = 0.5
    max_delay_s: float = 8.0
    max_retry_after_s: float = 30.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ConfigurationError(f"max_attempts must be >= 1, got {self.max_attempts}")
        if not 0 <= self.base_delay_s <= self.max_delay_s:
            raise ConfigurationError("need 0 <= base_delay_s <= max_delay_s")
        if self.budget_s <= 0 or self.max_retry_after_s < 0:
            raise ConfigurationError("budget_s must be > 0 and max_retry_after_s >= 0")

    @classmethod
    def from_settings(cls, settings: Settings) -> RetryPolicy:
        """The production policy: attempts and budget from settings."""
        return cls(max_attempts=settings.judge_max_attempts, budget_s=settings.judge_retry_budget_s)

    def backoff_s(self, attempt: int) -> float:
        """Full-jitter exponential delay after failed attempt number ``attempt``."""
        ceiling = min(self.max_delay_s, self.base_delay_s * 2 ** (attempt - 1))
        return random.uniform(0, ceiling)  # jitter, not security


def is_retryable(exc: BaseException) -> bool:
    """Whether another attempt may fix ``exc``."""
    if isinstance(exc, (anthropic.APIConnectionError, *GARBLED)):  # incl. APITimeoutError
        return True
    if not isinstance(exc, anthropic.APIStatusError):
        return False
    if exc.response.headers.get("x-should-retry") == "false":
        return False
    if exc.error_code in _NO_RETRY_CODES:
        return False
    return exc.status_code in _RETRYABLE_STATUS or exc.status_code >= 500


def retry_after_s(exc: BaseException | None) -> float | None:
    """The server's requested delay (``retry-after-ms`` or ``retry-after`` seconds)."""
    if not isinstance(exc, anthropic.APIStatusError):
        return None
    headers = exc.response.headers
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            value = float(raw) * scale
        except ValueError:
            continue  # an HTTP date: fall back to our own backoff
        if value >= 0:
            return value
    return None


def describe(exc: BaseException) -> str:
    """A one-line account of an SDK error: status, error type, message, request id."""
    if isinstance(exc, anthropic.APIStatusError):
        kind = exc.type or "error"
        message = exc.api_message or str(exc)
        rid = f" (request-id {exc.request_id})" if exc.request_id else ""
        return f"HTTP {exc.status_code} {kind}: {message}{rid}"
    if isinstance(exc, anthropic.APITimeoutError):
        return "timeout: no response within the client timeout"
    if isinstance(exc, anthropic.APIConnectionError):
        return f"connection error: {exc}"
    if isinstance(exc, GARBLED):
        return f"garbled response: {type(exc).__name__}: {exc}"[:300]
    return f"{type(exc).__name__}: {exc}"


def to_judge_error(exc: BaseException, attempts: int, elapsed_s: float) -> JudgeError:
    """Map an SDK error or a garbled reply, after retries ended, to the judge error tree."""
    if is_retryable(exc):
        return JudgeRetryableError(
            f"anthropic: gave up after {attempts} attempt(s) in {elapsed_s:.1f}s; "
            f"last {describe(exc)}"
        )
    return JudgeTerminalError(f"anthropic: {describe(exc)}; not retried")


def call_with_retry(policy: RetryPolicy, call: Callable[[], T]) -> T:
    """Run ``call`` under ``policy``; SDK errors and garbled replies leave as ``JudgeError``."""
    retrying = _retrying(policy)
    started = time.monotonic()
    attempts = 0

    def attempt() -> T:
        nonlocal attempts
        attempts += 1
        return call()

    try:
        return retrying(attempt)
    except _MAPPED as exc:
        raise to_judge_error(exc, attempts, time.monotonic() - started) from exc


@lru_cache(maxsize=64)
def _retrying(policy: RetryPolicy) -> Retrying:
    """The one tenacity ``Retrying`` of ``policy``, shared by every call.

    Its per-call state lives in a ``threading.local`` (one per greenlet under gevent), so
    concurrent calls share it safely; building one per call (that local, the stop and
    retry objects) was about 0.1 ms of a gevent Stage 1 worker's CPU per review.
    """

    def wait(state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        hinted = retry_after_s(exc)
        if hinted is not None:
            return min(hinted, policy.max_retry_after_s)
        return policy.backoff_s(state.attempt_number)

    return Retrying(
        retry=retry_if_exception(is_retryable),
        stop=stop_after_attempt(policy.max_attempts) | stop_before_delay(policy.budget_s),
        wait=wait,
        reraise=True,
    )
