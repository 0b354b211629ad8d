"""Helpers the integration tests share: samples and stream reads."""

from __future__ import annotations

import json
import uuid
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
