"""Decoding untrusted request bytes into a ``ReviewRequest``, with bounded size.

Every refusal is an ``InvalidRequest`` naming the first offending field, so that both the
client (at submit time), the CLI and a worker (for messages enqueued by anyone else) can
say exactly what was wrong. Nothing else escapes for any input: deep nesting, integers
too long to print, NaN and infinities, lone surrogates, keys that are not strings and
values JSON has no type for are refused here, before ``json`` or pydantic trip on them
(a ``RecursionError``, a ``ValueError`` naming no field).
"""

from __future__ import annotations

import json
import math
from typing import Any

from pydantic import ValidationError

from schemas.request import ReviewRequest
from workers.errors import InvalidRequest

#: Deepest nesting accepted in a request (a JSON Schema contract needs a dozen levels;
#: pydantic's JSON parser stops at 200, Python's ``json`` near 1,000 with a RecursionError).
MAX_NESTING = 100
#: Longest integer accepted, in bits (Python refuses to print one of 4,300+ digits).
MAX_INT_BITS = 1024
#: How much of a field's path an error names.
_SHOWN_PARTS = 6
#: How many offending fields beyond the first an error names.
_OTHERS_SHOWN = 9


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
        raise _as_invalid(exc, raw) from None
    except RecursionError:
        raise InvalidRequest("", "nesting too deep") from None
    schema = request.contract.json_schema if request.contract else None
    if isinstance(schema, dict):  # the one free-form field: as deep as the client allows
        check_json_value(schema, max_values=size, at=("contract", "json_schema"))
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
    check_json_value(obj, max_values=max_request_bytes)
    try:
        text = json.dumps(obj, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:  # checked above; kept as a net
        raise InvalidRequest("", f"not JSON-serialisable: {exc}") from None
    return decode_request(
        text, max_request_bytes=max_request_bytes, max_output_chars=max_output_chars
    )


def load_json(raw: str | bytes, *, max_bytes: int) -> Any:
    """A JSON document from untrusted bytes (a file, stdin), for ``request_from_obj``."""
    size = len(raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw)
    if size > max_bytes:
        raise OversizedRequest("", f"input is {size} bytes; the limit is {max_bytes}")
    try:
        return json.loads(raw)
    except RecursionError:
        raise InvalidRequest("", f"nesting too deep (more than {MAX_NESTING} levels)") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, a too-long integer
        raise InvalidRequest("", f"not JSON: {exc}") from None


def check_json_value(obj: Any, *, max_values: int, at: tuple[str, ...] = ()) -> None:
    """Refuse what JSON or pydantic cannot take, naming where it is; iterative (no recursion).

    ``at`` is where ``obj`` sits in its request: its depth counts.

    Raises:
        InvalidRequest: the path of the first offending value (``contract.json_schema.a``).
        OversizedRequest: more than ``max_values`` values (each takes a byte of JSON at least).
    """
    stack: list[tuple[Any, tuple[str, ...]]] = [(obj, at)]
    seen = 0
    while stack:
        value, path = stack.pop()
        seen += 1
        if seen > max_values:
            raise OversizedRequest("", f"more than {max_values} values; over the size limit")
        if len(path) > MAX_NESTING:
            raise InvalidRequest(_field(path), f"nested more than {MAX_NESTING} levels deep")
        if isinstance(value, dict):
            for key, item in reversed(value.items()):
                if not isinstance(key, str):
                    raise InvalidRequest(_field(path), f"key {key!r} is not a string")
                if problem := _leaf_problem(key):  # a key is text too: valid Unicode only
                    raise InvalidRequest(_field(path), f"a key: {problem}")
                stack.append((item, (*path, key)))
        elif isinstance(value, list | tuple):
            stack.extend((item, (*path, str(i))) for i, item in reversed(list(enumerate(value))))
        else:
            problem = _leaf_problem(value)
            if problem:
                raise InvalidRequest(_field(path), problem)


def _leaf_problem(value: Any) -> str | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            return f"a lone surrogate at character {exc.start} (not valid Unicode text)"
        return None
    if isinstance(value, int):
        bits = value.bit_length()
        return f"an integer of {bits} bits; too large" if bits > MAX_INT_BITS else None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{value} is not a finite number"
    return f"a {type(value).__name__}, which has no JSON form"


def _field(path: tuple[str, ...]) -> str:
    shown = ".".join(path[:_SHOWN_PARTS])
    return f"{shown}.…" if len(path) > _SHOWN_PARTS else shown or "(request)"


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


def _as_invalid(exc: ValidationError, raw: str) -> InvalidRequest:
    errors = exc.errors(include_url=False)
    if errors[0]["type"] == "json_invalid":
        return _unparsed(raw) or InvalidRequest("(request)", errors[0]["msg"])
    found: dict[str, str] = {}  # one reason per field, in pydantic's order
    for error in errors:
        field = ".".join(str(part) for part in error["loc"]) or "(request)"
        message = error["msg"]
        if error["type"] == "extra_forbidden":
            message = "unknown field"
        elif error["type"] == "missing":
            message = "required field is missing"
        found.setdefault(field, message)
    (field, message), *others = found.items()
    return InvalidRequest(field, message, tuple(others[:_OTHERS_SHOWN]))


def _unparsed(raw: str) -> InvalidRequest | None:
    """Where JSON pydantic could not parse goes wrong, when Python's ``json`` can tell.

    Python reads what pydantic refuses (lone surrogate escapes, NaN, nesting between 200
    and ~1,000 levels); the checks then name the field. Deeper text names the top-level
    field the nesting starts in.
    """
    try:
        obj = json.loads(raw)
    except RecursionError:
        where = _deep_top_field(raw)
        return InvalidRequest(where, f"nesting too deep (more than {MAX_NESTING} levels)")
    except ValueError:
        return None
    try:
        check_json_value(obj, max_values=len(raw) + 1)
    except InvalidRequest as refusal:
        return refusal
    return None


def _deep_top_field(raw: str) -> str:
    """The top-level key whose value nests deepest past ``MAX_NESTING``, or ``(request)``."""
    depth, key, in_string, escaped, start = 0, "(request)", False, False, 0
    for index, char in enumerate(raw):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
                if depth == 1:
                    key = raw[start + 1 : index] or key
        elif char == '"':
            in_string, start = True, index
        elif char in "[{":
            depth += 1
            if depth > MAX_NESTING:
                return key if raw.lstrip().startswith("{") else "(request)"
        elif char in "]}":
            depth -= 1
    return "(request)"
