"""Real infrastructure for tests: optional on a laptop, mandatory under CI."""

from __future__ import annotations

import os
import shutil

import pytest

from workers.local.redis_server import redis_answers

#: Time limits for test fleets: faults recover in seconds, not the production minutes.
#: They still nest (``Settings`` checks): judge calls < soft < hard < visibility timeout.
SHORT_LIMITS = {
    "WINDAGS_STAGE1_SOFT_LIMIT_S": "10",
    "WINDAGS_STAGE1_HARD_LIMIT_S": "12",
    "WINDAGS_STAGE2_SOFT_LIMIT_S": "25",
    "WINDAGS_STAGE2_HARD_LIMIT_S": "28",
    "WINDAGS_JUDGE_TIMEOUT_S": "2",
    "WINDAGS_JUDGE_RETRY_BUDGET_S": "2",
    "WINDAGS_VISIBILITY_TIMEOUT_S": "30",
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


def require_redis_server() -> None:
    """Return only when ``redis-server`` can be started (private Redis for fault tests)."""
    if shutil.which("redis-server") is None:
        unavailable("redis-server is not on PATH")
