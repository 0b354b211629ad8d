"""Fault-injection fixtures: real Redis (db 10 or a private server), real worker processes.

Tests skip when no Redis answers on a laptop, and fail when CI is set (CI starts one).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from celery import Celery

from tests.faults.support import (
    FaultServer,
    FleetUnderTest,
    private_redis,
    running_fault_server,
    running_fleet,
)
from tests.infrastructure import shared_database
from workers.fleet.app import create_app
from workers.local.redis_server import PrivateRedis

FAULTS_REDIS_URL = os.environ.get("WINDAGS_FAULTS_REDIS_URL", "redis://127.0.0.1:6379/10")

#: The fault tests' shared database (not the integration tests' db 9) and a client of it.
faults_redis_url, faults_db = shared_database(FAULTS_REDIS_URL)


@pytest.fixture(scope="package")
def builtin(faults_redis_url: str) -> Iterator[FleetUnderTest]:
    """The shared fleet that runs the built-in judge, for the tests that do not kill it.

    On a redis-server of its own: see ``private_redis``.
    """
    extra = {"WINDAGS_MAX_OUTPUT_CHARS": "50000"}
    with private_redis() as server, running_fleet(server.url, "fb", extra=extra) as fleet:
        yield fleet


@pytest.fixture
def app(builtin: FleetUnderTest) -> Celery:
    """A Celery app of the built-in fleet: sends tasks as another producer would."""
    return create_app(builtin.settings)


@pytest.fixture(scope="package")
def model_server() -> Iterator[FaultServer]:
    """A local Messages API server the model fleet's judge calls (scriptable faults)."""
    with running_fault_server() as server:
        yield server


@pytest.fixture(scope="package")
def model(faults_redis_url: str, model_server: FaultServer) -> Iterator[FleetUnderTest]:
    """The shared fleet whose judge is the real SDK against ``model_server``.

    On a redis-server of its own: its queues never meet the built-in fleet's.
    """
    with private_redis() as server, running_fleet(server.url, "fm", server=model_server) as fleet:
        yield fleet


@pytest.fixture(scope="module")
def slow_server() -> Iterator[FaultServer]:
    """A Messages API slow enough that each kill or stop finds reviews running and reserved.

    Every call takes 0.15 s, a Stage 2 call a second: stage2 kills and stops land mid-call.
    """
    with running_fault_server(0.15, stage2_latency_s=1.0) as server:
        yield server


@pytest.fixture(scope="module")
def own_redis(faults_redis_url: str) -> Iterator[PrivateRedis]:
    """A redis-server for one module whose faults must not touch the shared fleets."""
    with private_redis() as server:
        yield server
