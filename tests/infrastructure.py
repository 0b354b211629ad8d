"""Real infrastructure for tests: optional on a laptop, mandatory under CI."""

from __future__ import annotations

import os
import shutil
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import redis

from tests.redis_leases import LEASES, NoFreeDatabaseError
from workers.local.redis_server import redis_answers
from workers.testing.limits import SHORT_LIMITS as SHORT_LIMITS  # shared with bench.soak

#: Limits for churn tests (kills, restarts, poison) that recover in seconds: a killed
#: worker's messages return after 13 s (5 Stage 2 judge calls x 2 s < 11 < 12 < 13).
FAST_RECOVERY_LIMITS = {
    "WINDAGS_JUDGE_TIMEOUT_S": "1",
    "WINDAGS_JUDGE_MAX_ATTEMPTS": "2",
    "WINDAGS_JUDGE_RETRY_BUDGET_S": "2",
    "WINDAGS_STAGE1_SOFT_LIMIT_S": "4",
    "WINDAGS_STAGE1_HARD_LIMIT_S": "5",
    "WINDAGS_STAGE2_SOFT_LIMIT_S": "11",
    "WINDAGS_STAGE2_HARD_LIMIT_S": "12",
    "WINDAGS_VISIBILITY_TIMEOUT_S": "13",
}


def unavailable(reason: str) -> None:
    """Skip the test locally; fail it under CI, where the infrastructure must exist."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason}, and CI must have it")
    pytest.skip(reason)


def require_redis(url: str) -> str:
    """``url`` when a Redis answers there."""
    if not redis_answers(url):
        unavailable(f"no Redis at {url}")
    return url


def leased_database(url: str) -> str:
    """A database of ``url``'s server that this run holds, emptied (``tests/redis_leases.py``).

    ``url``'s own database unless another run of the suite holds it: two runs on one
    machine never empty or read each other's.
    """
    try:
        return LEASES.database(require_redis(url))
    except NoFreeDatabaseError as exc:
        unavailable(str(exc))
        raise


def require_redis_server() -> None:
    """Return only when ``redis-server`` can be started (private Redis for fault tests)."""
    if shutil.which("redis-server") is None:
        unavailable("redis-server is not on PATH")


def shared_database(url: str) -> tuple[Any, Any]:
    """Session fixtures of one Redis database this run holds: its URL, and a client of it.

    A test package binds them to the names its tests ask for, e.g.
    ``redis_url, redis_db = shared_database(REDIS_URL)`` in its conftest (pytest names a
    fixture after the attribute that holds it). ``url`` names the server and the database
    preferred; the run leases it, or another when a second run holds it
    (``leased_database``), emptied: what an earlier run left cannot pass for this one's.
    """

    @pytest.fixture(scope="session")
    def database_url() -> str:
        return leased_database(url)

    @pytest.fixture(scope="session")
    def database() -> Iterator[redis.Redis]:
        client = redis.Redis.from_url(leased_database(url))  # the same lease as database_url
        yield client
        client.close()

    return database_url, database


def wait_until(check: Callable[[], bool], timeout_s: float = 60.0, every_s: float = 0.2) -> bool:
    """Poll ``check`` until true or ``timeout_s`` passed; the last answer.

    Workers answer asynchronously: a test waits for what it expects, bounded, instead of
    sleeping a guessed time.
    """
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(every_s)
    return check()


def drop_prefix(client: redis.Redis, prefix: str) -> None:
    """Delete every key of a throwaway deployment (``<prefix>:*``)."""
    found = list(client.scan_iter(match=f"{prefix}:*"))
    if found:
        client.delete(*found)


@contextmanager
def scratch_redis(
    label: str, url: str = "redis://127.0.0.1:6379/15"
) -> Iterator[tuple[redis.Redis, str]]:
    """A client of a test Redis (db 15 unless ``url`` says) and a fresh prefix, emptied after."""
    client = redis.Redis.from_url(require_redis(url), socket_timeout=5)
    prefix = f"test-{label}-{uuid.uuid4().hex[:12]}"
    try:
        yield client, prefix
    finally:
        drop_prefix(client, prefix)
        client.close()
