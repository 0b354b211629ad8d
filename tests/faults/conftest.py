"""Fault-injection fixtures: real Redis (db 10 or a private server), real worker processes.

Tests skip when no Redis answers on a laptop, and fail when CI is set (CI starts one).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
import redis

from tests.faults.support import (
    FaultServer,
    fleet_env,
    private_redis,
    running_fault_server,
    settings_for,
)
from tests.infrastructure import require_redis
from workers.client import ReviewClient
from workers.local.launcher import LocalFleet
from workers.local.redis_server import PrivateRedis
from workers.settings import Settings

FAULTS_REDIS_URL = os.environ.get("WINDAGS_FAULTS_REDIS_URL", "redis://127.0.0.1:6379/10")


@pytest.fixture(scope="session")
def faults_redis_url() -> str:
    """The shared Redis database of the fault tests (not the integration tests' db 9)."""
    return require_redis(FAULTS_REDIS_URL)


@pytest.fixture(scope="session")
def faults_db(faults_redis_url: str) -> Iterator[redis.Redis]:
    """A client of the fault tests' database, emptied once per session."""
    client = redis.Redis.from_url(faults_redis_url)
    client.flushdb()
    yield client
    client.close()


@pytest.fixture(scope="package")
def builtin_env() -> dict[str, str]:
    """Environment of the shared fleet that runs the built-in judge."""
    return fleet_env("fb", judge="builtin", extra={"WINDAGS_MAX_OUTPUT_CHARS": "50000"})


@pytest.fixture(scope="package")
def builtin_redis(faults_redis_url: str) -> Iterator[PrivateRedis]:
    """The built-in fleet's own redis-server.

    Queue names are not prefixed, so two fleets on one database (another run of the suite
    at the same time) would take each other's tasks: every fleet here gets its own server.
    """
    server = private_redis()
    yield server
    server.stop()


@pytest.fixture(scope="package")
def builtin_db(builtin_redis: PrivateRedis) -> Iterator[redis.Redis]:
    """A client of the built-in fleet's Redis."""
    client = redis.Redis.from_url(builtin_redis.url)
    yield client
    client.close()


@pytest.fixture(scope="package")
def builtin_settings(builtin_redis: PrivateRedis, builtin_env: dict[str, str]) -> Settings:
    """What the built-in fleet's workers read from their environment."""
    return settings_for(builtin_env, builtin_redis.url)


@pytest.fixture(scope="package")
def builtin_fleet(builtin_redis: PrivateRedis, builtin_env: dict[str, str]) -> Iterator[LocalFleet]:
    """One worker per queue, built-in judge, shared by the tests that do not kill it."""
    running = LocalFleet(builtin_redis.url, extra_env=builtin_env, start_private_redis=False)
    with running:
        running.wait_ready(timeout_s=90)
        yield running


@pytest.fixture
def builtin_client(builtin_settings: Settings) -> Iterator[ReviewClient]:
    """A DAG runtime's client of the built-in fleet."""
    client = ReviewClient(builtin_settings)
    yield client
    client.close()


@pytest.fixture(scope="package")
def model_server() -> Iterator[FaultServer]:
    """A local Messages API server the model fleet's judge calls (scriptable faults)."""
    with running_fault_server() as server:
        yield server


@pytest.fixture(scope="package")
def model_env(model_server: FaultServer) -> dict[str, str]:
    """Environment of the shared fleet whose judge is the real SDK against the server."""
    return fleet_env("fm", judge="anthropic", server=model_server)


@pytest.fixture(scope="module")
def own_redis(faults_redis_url: str) -> Iterator[PrivateRedis]:
    """A redis-server for one module whose faults must not touch the shared fleets."""
    server = private_redis()
    yield server
    server.stop()


@pytest.fixture(scope="package")
def model_redis(faults_redis_url: str) -> Iterator[PrivateRedis]:
    """The model fleet's own redis-server: its queues never meet the built-in fleet's."""
    server = private_redis()
    yield server
    server.stop()


@pytest.fixture(scope="package")
def model_db(model_redis: PrivateRedis) -> Iterator[redis.Redis]:
    """A client of the model fleet's Redis."""
    client = redis.Redis.from_url(model_redis.url)
    yield client
    client.close()


@pytest.fixture(scope="package")
def model_settings(model_redis: PrivateRedis, model_env: dict[str, str]) -> Settings:
    """What the model fleet's workers read from their environment."""
    return settings_for(model_env, model_redis.url)


@pytest.fixture(scope="package")
def model_fleet(model_redis: PrivateRedis, model_env: dict[str, str]) -> Iterator[LocalFleet]:
    """One worker per queue, Anthropic judge against ``model_server``, on its own Redis."""
    running = LocalFleet(model_redis.url, extra_env=model_env, start_private_redis=False)
    with running:
        running.wait_ready(timeout_s=90)
        yield running


@pytest.fixture
def model_client(model_settings: Settings) -> Iterator[ReviewClient]:
    """A DAG runtime's client of the model fleet."""
    client = ReviewClient(model_settings)
    yield client
    client.close()
