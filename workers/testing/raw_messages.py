"""Raw queue messages of every malformed kind, as another producer could push them.

For tests that write straight to a queue list (``LPUSH stage1 <bytes>``) what no client
of this fleet sends: garbage, wrong JSON shapes, bad base64, pickle and other content
types, unknown task names, missing headers or properties, huge bodies, deep nesting,
compressed bodies that inflate past the limit or do not inflate at all;
and valid reviews whose scheduling headers are broken (they must still be reviewed).
Each message says what the fleet must do with it, so a test counts outcomes against it.
"""

from __future__ import annotations

import base64
import json
import pickle
import uuid
import zlib
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

JSON = "application/json"
#: kombu's name of zlib compression (``task_compression = "zlib"``).
ZLIB = "application/x-gzip"


class Expect(StrEnum):
    """What the fleet must do with a message."""

    QUARANTINE = "quarantine"
    """Moved, raw, to the quarantine stream with a reason; never delivered."""
    REVIEW = "review"
    """Delivered and reviewed: a result on its DAG's stream."""


@dataclass(frozen=True, slots=True)
class RawMessage:
    """Bytes for a queue list, and what must become of them."""

    kind: str
    data: bytes
    expect: Expect
    node_id: str | None = None
    """The review a ``REVIEW`` message carries."""


def envelope(
    task: str,
    args: list[Any],
    *,
    queue: str = "stage1",
    headers: dict[str, Any] | None = None,
    body: bytes | None = None,
    content_type: str = JSON,
) -> dict[str, Any]:
    """A Celery task protocol 2 message as kombu's Redis transport stores it."""
    task_id = str(uuid.uuid4())
    raw_body = body if body is not None else json.dumps([args, {}, _EMBED]).encode()
    return {
        "body": base64.b64encode(raw_body).decode(),
        "content-encoding": "utf-8",
        "content-type": content_type,
        "headers": {
            "lang": "py",
            "task": task,
            "id": task_id,
            "root_id": task_id,
            "retries": 0,
            "timelimit": [None, None],
            **(headers or {}),
        },
        "properties": {
            "correlation_id": task_id,
            "delivery_mode": 2,
            "delivery_info": {"exchange": "", "routing_key": queue},
            "priority": 0,
            "body_encoding": "base64",
            "delivery_tag": str(uuid.uuid4()),
        },
    }


_EMBED = {"callbacks": None, "errbacks": None, "chain": None, "chord": None}


def encode(message: dict[str, Any]) -> bytes:
    """The bytes kombu would push."""
    return json.dumps(message).encode()


class _OpensAFile:
    """Unpickling this creates ``path``: proof that a pickle was (or was not) loaded."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, tuple[str, str]]:
        return open, (str(self.path), "w")


def malformed(task: str, queue: str, *, marker: Path, huge_bytes: int) -> list[RawMessage]:
    """One message of each malformed kind for ``queue`` (each one unique).

    Args:
        task: A task name the fleet has (so that only the named fault is wrong).
        queue: The queue the messages are for.
        marker: A file a loaded pickle would create.
        huge_bytes: Size of the oversized message (above the fleet's message limit).
    """
    nonce = uuid.uuid4().hex[:8]

    def bad(kind: str, data: bytes | dict[str, Any]) -> RawMessage:
        raw = encode(data) if isinstance(data, dict) else data
        return RawMessage(kind, raw, Expect.QUARANTINE)

    def with_envelope(**changes: Any) -> dict[str, Any]:
        message = envelope(task, [f"args-{nonce}"], queue=queue)
        for key, value in changes.items():
            if value is None:
                message.pop(key, None)
            else:
                message[key] = value
        return message

    def headers(**changes: Any) -> dict[str, Any]:
        message = with_envelope()
        message["headers"].update(changes)
        return message

    def props(**changes: Any) -> dict[str, Any]:
        message = with_envelope()
        message["properties"].update(changes)
        return message

    deep = ("[" * 3000 + "]" * 3000).encode()
    return [
        bad("garbage", f"garbage-{nonce}".encode()),
        # The take reads the tag by plain search: it is recorded, then quarantined.
        bad("not_json_with_a_tag", f'not json, "delivery_tag": "tag-{nonce}"'.encode()),
        bad("empty_bytes", b""),
        bad("binary", bytes(range(256)) + nonce.encode()),
        bad("not_utf8", b"\xff\xfe\xc3" + nonce.encode()),
        bad("json_list", f'[1, 2, "{nonce}"]'.encode()),
        bad("json_string", f'"{nonce}"'.encode()),
        bad("json_number", f"{int(nonce, 16)}".encode()),
        bad("deep_envelope", deep + nonce.encode()),
        bad("no_properties", with_envelope(properties=None)),
        bad("properties_not_object", with_envelope(properties=[nonce])),
        bad("no_delivery_tag", props(delivery_tag=None)),
        bad("delivery_tag_not_string", props(delivery_tag=12345)),
        bad("bad_body_encoding", props(body_encoding="rot13")),
        bad("no_body", with_envelope(body=None)),
        bad("bad_base64", with_envelope(body=f"!!!{nonce}!!")),
        bad(
            "body_not_json",
            with_envelope(body=base64.b64encode(b"not json " + nonce.encode()).decode()),
        ),
        bad(
            "body_wrong_shape",
            envelope(task, [], queue=queue, body=json.dumps({"args": nonce}).encode()),
        ),
        bad("body_deep", envelope(task, [], queue=queue, body=deep + b"")),
        bad(
            "pickle",
            envelope(
                task,
                [],
                queue=queue,
                content_type="application/x-python-serialize",
                body=pickle.dumps(_OpensAFile(marker)),
            ),
        ),
        bad(
            "yaml",
            envelope(
                task,
                [],
                queue=queue,
                content_type="application/x-yaml",
                body=f"args: [{nonce}]".encode(),
            ),
        ),
        bad(
            "raw_data",
            envelope(task, [], queue=queue, content_type="application/data", body=nonce.encode()),
        ),
        bad("no_content_type", with_envelope(**{"content-type": None})),
        bad("unknown_task", envelope(f"windags.review.nope_{nonce}", ["{}"], queue=queue)),
        bad("celery_builtin_task", envelope("celery.backend_cleanup", [nonce], queue=queue)),
        bad("no_headers", with_envelope(headers=None)),
        bad("headers_not_object", with_envelope(headers=f"task={task}")),
        bad("no_task_id", headers(id=None)),
        bad("bad_timelimit", headers(timelimit=f"soon-{nonce}")),
        bad("retries_not_int", headers(retries=f"once-{nonce}")),
        bad(
            "callbacks",
            envelope(
                task,
                [],
                queue=queue,
                body=json.dumps(
                    [[nonce], {}, {**_EMBED, "callbacks": [{"task": "celery.ping"}]}]
                ).encode(),
            ),
        ),
        bad("huge", envelope(task, ["x" * huge_bytes + nonce], queue=queue)),
        # A small message whose body inflates past the limit: kombu would inflate it whole.
        bad("zip_bomb", zipped(task, ["x" * huge_bytes + nonce], queue=queue)),
        bad("unknown_compression", zipped(task, [nonce], queue=queue, kind="application/x-lzma")),
        bad("not_zlib", with_envelope(headers={"task": task, "compression": ZLIB})),
        bad("zlib_cut_short", zipped(task, [nonce], queue=queue, cut=8)),
    ]


def zipped(
    task: str, args: list[Any], *, queue: str, kind: str = "", cut: int = 0
) -> dict[str, Any]:
    """``envelope`` with its body compressed as ``task_compression = "zlib"`` sends it.

    ``kind``: the compression header, if not zlib's; ``cut``: bytes dropped off the end.
    """
    body = zlib.compress(json.dumps([args, {}, _EMBED]).encode())
    message = envelope(task, [], queue=queue, body=body[: len(body) - cut])
    message["headers"]["compression"] = kind or ZLIB
    return message


#: Broken scheduling headers a valid review may carry: it must still be reviewed.
REPAIRED_HEADERS: dict[str, dict[str, Any]] = {
    "eta_garbage": {"eta": "garbage"},
    "eta_year_9999": {"eta": "9999-12-31T23:59:59+00:00"},
    "eta_not_a_string": {"eta": 12345},
    "expires_in_the_past": {"expires": "2001-01-01T00:00:00+00:00"},
    "countdown_garbage": {"countdown": "soon"},
}


def repaired(
    kind: str, task: str, request_json: str, node_id: str, queue: str = "stage1"
) -> RawMessage:
    """A valid review whose ``REPAIRED_HEADERS[kind]`` are broken; it must be reviewed."""
    message = envelope(task, [request_json], queue=queue, headers=REPAIRED_HEADERS[kind])
    return RawMessage(kind, encode(message), Expect.REVIEW, node_id)
