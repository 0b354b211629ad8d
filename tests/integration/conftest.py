"""Real Redis, real worker processes: the fleet as ops run it, on this machine.

Tests skip when no Redis answers on a laptop, and fail when CI is set (CI starts one).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
import redis

from tests.infrastructure import SHORT_LIMITS, require_redis
from workers.client import ReviewClient
from workers.local.launcher import LocalFleet
from workers.settings import Settings

REDIS_URL = os.environ.get("WINDAGS_TEST_REDIS_URL", "redis://127.0.0.1:6379/9")


@pytest.fixture(scope="session")
def redis_url() -> str:
    return require_redis(REDIS_URL)


@pytest.fixture(scope="session")
def redis_db(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url)
    client.flushdb()
    yield client
    client.close()


@pytest.fixture(scope="module")
def fleet_env() -> dict[str, str]:
    """Short limits so that faults recover in seconds, not the production minutes."""
    return {
        "WINDAGS_KEY_PREFIX": f"it-{uuid.uuid4().hex[:8]}",
        "WINDAGS_JUDGE_BACKEND": "builtin",
        **SHORT_LIMITS,
    }


@pytest.fixture(scope="module")
def settings(redis_url: str, fleet_env: dict[str, str]) -> Settings:
    return Settings.from_environment(fleet_env, redis_url=redis_url)


@pytest.fixture(scope="module")
def fleet(redis_url: str, redis_db: redis.Redis, fleet_env: dict[str, str]) -> Iterator[LocalFleet]:
    for queue in ("stage1", "router", "stage2"):
        redis_db.delete(queue)
    running = LocalFleet(redis_url, extra_env=fleet_env, start_private_redis=False)
    with running:
        running.wait_ready(timeout_s=90)
        yield running


@pytest.fixture
def client(settings: Settings) -> Iterator[ReviewClient]:
    review_client = ReviewClient(settings)
    yield review_client
    review_client.close()
