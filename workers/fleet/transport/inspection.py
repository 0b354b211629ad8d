"""What a queue message must be before kombu and Celery see it, checked without trusting it.

A Redis list holds whatever anyone pushed: ``LPUSH stage1 garbage``, another producer's
wrong shapes, pickle, a task this fleet does not have. kombu decodes the envelope and
the body inside its consumer loop, where an exception kills the worker; Celery drops
what it cannot run with only a log line. So every message is read here first, the way
kombu and Celery will read it, and refused with a reason when either would fail:
the channel then quarantines it instead of delivering it (``redis_transport.py``).

Only JSON is ever deserialized: the content type is checked before the body is decoded,
so pickle and every other type stay bytes. A compressed body (the fleet sends zlib:
``task_compression``) is inflated here under the message size limit first: kombu
inflates it whole, so a small bomb would take the consumer's memory. Two header faults
on an otherwise valid task are repaired rather than refused, so the review still runs:
an ``eta`` that does not parse, lies more than ``max_eta_s`` ahead (it would be
redelivered as it waits) or long in the past, and any ``expires`` (Celery would discard a
review past it, silently).
"""

from __future__ import annotations

import base64
import binascii
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kombu import serialization
from kombu.utils import json as kombu_json

from workers.fleet.transport.eta import MAX_ETA_S, repair_times

JSON = "application/json"
#: The one compression accepted: zlib, as kombu names it (its aliases: zlib, gzip).
ZLIB = "application/x-gzip"
#: kombu's and Celery's own readers (untyped), so that a check reads what they will read.
_json_loads: Callable[[str], Any] = kombu_json.loads
_body_loads: Callable[..., Any] = serialization.loads
#: Defaults of ``Rules``.
MAX_BYTES = 16 * 1024 * 1024
#: Embedded workflow fields a review task never carries: accepting them would let a
#: stranger chain arbitrary follow-up tasks onto ours.
_WORKFLOW = ("callbacks", "errbacks", "chain", "chord")
#: Headers Celery reads, with the JSON types it can take (None is always allowed).
_HEADER_TYPES: dict[str, tuple[type, ...]] = {
    "lang": (str,),
    "shadow": (str,),
    "root_id": (str,),
    "parent_id": (str,),
    "group": (str,),
    "group_index": (int,),
    "argsrepr": (str,),
    "kwargsrepr": (str,),
    "origin": (str,),
    "ignore_result": (bool,),
    "retries": (int,),
    "replaced_task_nesting": (int,),
    "stamped_headers": (list,),
    "stamps": (dict,),
}
#: Context fields a message must not set: they change how Celery runs the task.
_FORBIDDEN_HEADERS = ("is_eager", "called_directly")


@dataclass(frozen=True, slots=True)
class Rules:
    """What this fleet's consumers accept.

    Attributes:
        tasks: Celery task names a message may carry; empty for a plain kombu consumer
            (then only the envelope and the JSON body are checked).
        max_bytes: Larger messages are refused before anything is parsed.
        max_eta_s: An ``eta`` further ahead is dropped: the task runs now.
    """

    tasks: frozenset[str] = frozenset()
    max_bytes: int = MAX_BYTES
    max_eta_s: float = MAX_ETA_S


@dataclass(frozen=True, slots=True)
class Accepted:
    """A message kombu and Celery can take; ``payload`` is what to deliver."""

    payload: dict[str, Any]
    repairs: tuple[str, ...] = field(default=())
    """Header faults removed so that the review still runs, one line each."""


@dataclass(frozen=True, slots=True)
class Refused:
    """A message to quarantine, and why (one line, for the operator)."""

    reason: str


class _Refusal(Exception):
    """Internal: the first reason a message cannot be delivered."""


def inspect_message(raw: bytes | str, rules: Rules) -> Accepted | Refused:
    """Read ``raw`` as kombu, then Celery, would; never raises for any input."""
    size = len(raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw)
    if size > rules.max_bytes:
        return Refused(f"message is {size} bytes; the limit is {rules.max_bytes}")
    try:
        payload = _envelope(raw)
        body = _body(payload, rules.max_bytes)
        repairs: list[str] = []
        if rules.tasks:
            _task(payload, body, rules, repairs)
    except _Refusal as refusal:
        return Refused(str(refusal))
    return Accepted(payload, tuple(repairs))


def _envelope(raw: bytes | str) -> dict[str, Any]:
    """The kombu envelope: a JSON object with a delivery tag and a base64 body."""
    try:
        payload = _json_loads(_text(raw))
    except Exception as exc:  # any failure to decode untrusted bytes is a refusal
        raise _Refusal(f"not a JSON message envelope: {_brief(exc)}") from None
    if not isinstance(payload, dict):
        raise _Refusal(f"the envelope is a JSON {type(payload).__name__}, not an object")
    properties = payload.get("properties")
    if not isinstance(properties, dict):
        raise _Refusal("no 'properties' object in the envelope")
    if not isinstance(properties.get("delivery_tag"), str) or not properties["delivery_tag"]:
        raise _Refusal("no delivery tag (properties.delivery_tag)")
    for name in ("delivery_info", "headers"):
        holder = properties if name == "delivery_info" else payload
        if holder.get(name) is not None and not isinstance(holder[name], dict):
            raise _Refusal(f"'{name}' is a {type(holder[name]).__name__}, not an object")
    if properties.get("body_encoding") != "base64":
        raise _Refusal(f"body encoding {properties.get('body_encoding')!r}, not 'base64'")
    content_type = payload.get("content-type")
    if content_type != JSON:
        raise _Refusal(f"content type {content_type!r} is not accepted (only {JSON}); not read")
    encoding = payload.get("content-encoding") or "utf-8"
    if not isinstance(encoding, str) or encoding.lower() != "utf-8":
        raise _Refusal(f"content encoding {str(encoding)[:100]!r}, not utf-8")
    return payload


def _body(payload: dict[str, Any], max_bytes: int) -> Any:
    """The body, decoded exactly as kombu's ``Message.payload`` decodes it."""
    body = payload.get("body")
    if not isinstance(body, str) or not body:
        raise _Refusal("no body (a base64 string)")
    try:
        data = base64.b64decode(body.encode("utf-8", "surrogatepass"))
    except (binascii.Error, ValueError) as exc:
        raise _Refusal(f"the body is not base64: {_brief(exc)}") from None
    compression = (payload.get("headers") or {}).get("compression")
    if compression:  # kombu inflates any truthy one (``kombu.message.Message``)
        data = _inflated(data, compression, max_bytes)
    try:
        return _body_loads(data, JSON, "utf-8", accept={JSON})
    except Exception as exc:  # kombu's JSON decoder, on bytes nobody vouched for
        raise _Refusal(f"the body is not JSON: {_brief(exc)}") from None


def _inflated(data: bytes, compression: object, max_bytes: int) -> bytes:
    """A zlib body inflated, refused past ``max_bytes`` before it is all in memory."""
    if compression != ZLIB:
        raise _Refusal(f"compression {str(compression)[:100]!r} is not accepted (only {ZLIB})")
    inflater = zlib.decompressobj()
    try:
        inflated = inflater.decompress(data, max_bytes + 1)
    except zlib.error as exc:
        raise _Refusal(f"the body does not inflate: {_brief(exc)}") from None
    if len(inflated) > max_bytes:
        raise _Refusal(f"the body inflates past the limit of {max_bytes} bytes")
    if not inflater.eof:
        raise _Refusal("the body's zlib stream is cut short")
    return inflated


def _task(payload: dict[str, Any], body: Any, rules: Rules, repairs: list[str]) -> None:
    """Celery's task protocol 2, one of our task names, headers of the types Celery reads."""
    headers = payload.get("headers")
    if not isinstance(headers, dict) or "task" not in headers:
        raise _Refusal("no 'task' header (not a Celery task protocol 2 message)")
    name = headers["task"]
    if not isinstance(name, str) or name not in rules.tasks:
        raise _Refusal(f"unknown task name {str(name)[:200]!r}")
    if not isinstance(headers.get("id"), str) or not headers["id"]:
        raise _Refusal("no task id (headers.id)")
    for header, types in _HEADER_TYPES.items():
        value = headers.get(header)
        if value is not None and not _of_type(value, types):
            raise _Refusal(f"header {header!r} is a {type(value).__name__}")
    for header in _FORBIDDEN_HEADERS:
        if headers.get(header):
            raise _Refusal(f"header {header!r} is not accepted from the wire")
    _time_limits(headers.get("timelimit"))
    _arguments(body)
    repairs.extend(repair_times(headers, rules.max_eta_s))


def _of_type(value: Any, types: tuple[type, ...]) -> bool:
    """``isinstance``, except that a JSON boolean is not an integer here."""
    return isinstance(value, types) and (bool in types or not isinstance(value, bool))


def _time_limits(value: Any) -> None:
    if value is None:
        return
    pair = value if isinstance(value, list) and len(value) == 2 else None
    if pair is None or any(
        v is not None and (isinstance(v, bool) or not isinstance(v, int | float)) for v in pair
    ):
        raise _Refusal(f"header 'timelimit' is not [soft, hard] seconds: {str(value)[:100]}")


def _arguments(body: Any) -> None:
    """``[args, kwargs, embed]``: what Celery unpacks from a protocol 2 body."""
    if not (isinstance(body, list) and len(body) == 3):
        raise _Refusal("the body is not [args, kwargs, embed] (task protocol 2)")
    args, kwargs, embed = body
    if not isinstance(args, list) or not isinstance(kwargs, dict):
        raise _Refusal("the body's args are not a list and kwargs an object")
    if embed is not None and not isinstance(embed, dict):
        raise _Refusal("the body's embed is not an object")
    if embed and any(embed.get(name) for name in _WORKFLOW):
        raise _Refusal("callbacks, errbacks, chains and chords are not accepted")


def _text(raw: bytes | str) -> str:
    """Text as kombu reads it: undecodable bytes replaced, never an error."""
    return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw


def _brief(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:200]


@dataclass(frozen=True, slots=True)
class UnackedRecord:
    """An ``unacked`` hash value kombu can restore, and who took it."""

    message: dict[str, Any]
    exchange: str
    routing_key: str
    owner: str | None = None
    """The taking process's owner id (``leases.py``); None in a record of an old take, or
    of kombu's own ``BRPOP`` path: those wait for the visibility timeout."""

    def restorable(self) -> tuple[dict[str, Any], str, str]:
        """Kombu's triple, as ``_do_restore_message`` takes it."""
        return self.message, self.exchange, self.routing_key


def unacked_record(raw: bytes | str) -> UnackedRecord | Refused:
    """An ``unacked`` hash value: ``[message, exchange, routing key]``, and maybe an owner.

    kombu writes the triple; our take adds the owner as a fourth element
    (``workers/fleet/transport/quarantine.py``), and both are read here: records of either
    kind sit in ``unacked`` during a rolling upgrade. kombu's restore raises on a value that
    is not such a triple (the worker dies) and drops, with only a log line, a message whose
    headers or properties are not objects.
    """
    try:
        record = _json_loads(_text(raw))
    except Exception as exc:  # an unacked value written by anyone
        return Refused(f"unacked record is not JSON: {_brief(exc)}")
    if not (isinstance(record, list) and len(record) in (3, 4)):
        return Refused("unacked record is not [message, exchange, routing key(, owner)]")
    message, exchange, routing_key, *rest = record
    owner = rest[0] if rest else None
    if not (isinstance(exchange, str) and isinstance(routing_key, str) and routing_key):
        return Refused("unacked record names no queue to restore to")
    if owner is not None and not isinstance(owner, str):
        return Refused(f"unacked record's owner is a {type(owner).__name__}, not a string")
    properties = message.get("properties") if isinstance(message, dict) else None
    if not isinstance(properties, dict):
        return Refused("unacked message has no properties object")
    for holder, name in ((message, "headers"), (properties, "delivery_info")):
        if name in holder and not isinstance(holder[name], dict):
            return Refused(f"unacked message's {name} is not an object")
    return UnackedRecord(message, exchange, routing_key, owner or None)
