"""Real Redis, real worker processes: the fleet as ops run it, on this machine.

Tests skip when no Redis answers on a laptop, and fail when CI is set (CI starts one).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

from bench import common
from tests.infrastructure import SHORT_LIMITS, shared_database
from workers.client import ReviewClient
from workers.local.launcher import LocalFleet
from workers.settings import Settings

REDIS_URL = os.environ.get("WINDAGS_TEST_REDIS_URL", "redis://127.0.0.1:6379/9")

#: The integration tests' shared database and a client of it.
redis_url, redis_db = shared_database(REDIS_URL)


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
    return common.settings_for(redis_url, fleet_env)


@pytest.fixture(scope="module")
def fleet(redis_url: str, fleet_env: dict[str, str]) -> Iterator[LocalFleet]:
    """One worker per queue on the shared database, under a prefix of its own."""
    with common.running_fleet(redis_url, fleet_env) as running:
        yield running


@pytest.fixture
def client(settings: Settings) -> Iterator[ReviewClient]:
    review_client = ReviewClient(settings)
    yield review_client
    review_client.close()
