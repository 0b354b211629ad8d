"""Decoding untrusted request bytes into a ``ReviewRequest``, with bounded size.

Every refusal is an ``InvalidRequest`` naming the first offending field, so that both the
client (at submit time) and a worker (for messages enqueued by anyone else) can say
exactly what was wrong.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from schemas.request import ReviewRequest
from workers.errors import InvalidRequest


class OversizedRequest(InvalidRequest):
    """A request or output beyond the configured size limits."""


def decode_request(
    raw: str | bytes, *, max_request_bytes: int, max_output_chars: int
) -> ReviewRequest:
    """Parse and validate one request; raise ``InvalidRequest`` naming the field."""
    size = len(raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw)
    if size > max_request_bytes:
        raise OversizedRequest("", f"request is {size} bytes; the limit is {max_request_bytes}")
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidRequest("", f"not UTF-8 (byte {exc.start})") from None
    try:
        request = ReviewRequest.model_validate_json(raw)
    except ValidationError as exc:
        raise _as_invalid(exc) from None
    except RecursionError:
        raise InvalidRequest("", "nesting too deep") from None
    chars = len(request.output.content)
    if chars > max_output_chars:
        raise OversizedRequest(
            "output.content", f"{chars} characters; the limit is {max_output_chars}"
        )
    return request


def encode_request(request: ReviewRequest) -> str:
    """The wire form of a request (by alias: ``signals.self``)."""
    return request.model_dump_json(by_alias=True, exclude_defaults=False)


def request_from_obj(obj: Any, *, max_request_bytes: int, max_output_chars: int) -> ReviewRequest:
    """Validate a decoded JSON value (a dict from a file or a test) the same strict way."""
    try:
        text = json.dumps(obj, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidRequest("", f"not JSON-serialisable: {exc}") from None
    return decode_request(
        text, max_request_bytes=max_request_bytes, max_output_chars=max_output_chars
    )


def identity_of(raw: str | bytes) -> tuple[str | None, str | None, int | None]:
    """Best-effort (dag_id, node_id, attempt) of a request that failed to validate."""
    try:
        obj = json.loads(raw)
    except (ValueError, RecursionError):
        return None, None, None
    if not isinstance(obj, dict):
        return None, None, None
    dag, node, attempt = obj.get("dag_id"), obj.get("node_id"), obj.get("attempt", 1)
    return (
        dag if isinstance(dag, str) and 0 < len(dag) <= 200 else None,
        node if isinstance(node, str) and 0 < len(node) <= 200 else None,
        attempt if isinstance(attempt, int) and not isinstance(attempt, bool) else None,
    )


def _as_invalid(exc: ValidationError) -> InvalidRequest:
    first = exc.errors(include_url=False)[0]
    field = ".".join(str(part) for part in first["loc"]) or "(request)"
    message = first["msg"]
    if first["type"] == "extra_forbidden":
        message = "unknown field"
    elif first["type"] == "missing":
        message = "required field is missing"
    return InvalidRequest(field, message)
