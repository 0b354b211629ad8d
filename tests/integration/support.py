"""Helpers the integration tests share: samples, stream reads, a kombu queue of a test's own."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import redis

from schemas.result import ReviewError, ReviewResult
from workers.results.stream import read_all
from workers.settings import Settings

SAMPLES = Path(__file__).resolve().parents[2] / "workers" / "samples"


def sample(name: str, **changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = json.loads((SAMPLES / name).read_text())
    body.update(changes)
    return body


def fresh_dag() -> str:
    return f"dag-{uuid.uuid4().hex[:10]}"


def read_stream(
    client: redis.Redis, settings: Settings, dag_id: str
) -> list[tuple[dict[str, str], ReviewResult | ReviewError]]:
    return [(e.fields, e.payload) for e in read_all(client, settings.keys.results(dag_id))]


def kombu_keys(redis_db: redis.Redis, stem: str, **extra: str) -> Iterator[dict[str, str]]:
    """A queue and kombu's unacked keys of a test's own (``<stem>-<tag>``), deleted after.

    ``extra``: more names, each a suffix of the same stem (``target="-next"``). A fixture
    yields from it, so the fleet tests sharing the database are untouched.
    """
    own = f"{stem}-{uuid.uuid4().hex[:8]}"
    names = {
        "queue": own,
        "unacked_key": f"{own}:unacked",
        "unacked_index_key": f"{own}:unacked_index",
        "unacked_mutex_key": f"{own}:unacked_mutex",
        **{name: f"{own}{suffix}" for name, suffix in extra.items()},
    }
    yield names
    redis_db.delete(*names.values())
