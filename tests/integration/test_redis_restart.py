"""Workers that survive a Redis restart, and a local fleet that restarts the ones that exit.

A worker holding reserved messages (ETA'd, waiting in its timer) used to exit with
``AttributeError("'NoneType' object has no attribute 'hostname'")`` when Redis restarted
(kombu#970); the transport turns that into a connection error the worker retries. Any
exit that still happens is the supervisor's: it restarts the worker with backoff.
"""

from __future__ import annotations

import json
import os
import signal
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from tests.infrastructure import FAST_RECOVERY_LIMITS, require_redis_server, wait_until
from workers.fleet.app import create_app
from workers.fleet.queues import Queue, TaskName
from workers.intake import encode_request, request_from_obj
from workers.local.launcher import LocalFleet
from workers.local.redis_server import PrivateRedis
from workers.local.supervisor import Restart
from workers.results.stream import read_all
from workers.settings import Settings

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
GOOD: dict[str, Any] = json.loads((ROOT / "workers" / "samples" / "good_python.json").read_text())
#: Short limits, so that messages a dead connection held come back within seconds.
ENV = {
    "WINDAGS_JUDGE_BACKEND": "builtin",
    **FAST_RECOVERY_LIMITS,
}


@pytest.fixture
def aof_fleet() -> Iterator[tuple[PrivateRedis, LocalFleet, Settings, list[Restart]]]:
    require_redis_server()
    env = {**ENV, "WINDAGS_KEY_PREFIX": f"rr-{uuid.uuid4().hex[:6]}"}
    restarts: list[Restart] = []
    server = PrivateRedis(appendonly=True).start()
    fleet = LocalFleet(server.url, extra_env=env, start_private_redis=False)
    fleet.on_restart = restarts.append
    try:
        with fleet:
            fleet.wait_ready(timeout_s=90)
            yield server, fleet, Settings.from_environment(env, redis_url=server.url), restarts
    finally:
        server.close()


def _results(db: redis.Redis, settings: Settings, dag: str) -> Counter[str]:
    entries = read_all(db, settings.keys.results(dag))
    return Counter(e.fields["review_key"] for e in entries)


@pytest.mark.timeout(150)
def test_a_worker_holding_reserved_messages_survives_a_redis_restart(
    aof_fleet: tuple[PrivateRedis, LocalFleet, Settings, list[Restart]],
) -> None:
    server, fleet, settings, restarts = aof_fleet
    dag = f"reserved-{uuid.uuid4().hex[:6]}"
    app = create_app(settings)
    keys = []
    for i in range(6):
        body = {**GOOD, "dag_id": dag, "node_id": f"n{i}"}
        request = request_from_obj(body, max_request_bytes=10**6, max_output_chars=10**5)
        # A countdown: the stage1 worker reserves these and holds them in its timer.
        app.send_task(TaskName.STAGE1.value, args=[encode_request(request)], countdown=4)
        keys.append(request.review_key)
    app.close()
    time.sleep(1.0)
    server.restart(kill=True, down_s=1.0)
    time.sleep(6.0)  # the countdowns fall due while the connection is being rebuilt
    exited = {q.value: p.poll() for q, p in fleet.workers.items() if p.poll() is not None}
    db = redis.Redis.from_url(server.url)
    done = wait_until(lambda: set(keys) <= set(_results(db, settings, dag)), timeout_s=60)
    counted = _results(db, settings, dag)
    print(f"\n[redis restart] exits {exited}, restarts {len(restarts)}, results {dict(counted)}")
    assert exited == {} and restarts == []
    assert done, counted
    assert all(n == 1 for n in counted.values())


@pytest.mark.timeout(120)
def test_a_worker_that_exits_on_its_own_is_restarted_with_backoff_and_counted(
    aof_fleet: tuple[PrivateRedis, LocalFleet, Settings, list[Restart]],
) -> None:
    server, fleet, settings, restarts = aof_fleet
    assert fleet.supervisor is not None
    crashed = fleet.workers[Queue.ROUTER]
    os.killpg(crashed.pid, signal.SIGKILL)  # not through the fleet: an OOM kill, say
    crashed.wait(timeout=10)
    assert wait_until(lambda: fleet.workers[Queue.ROUTER] is not crashed, timeout_s=30)
    fleet.wait_ready(timeout_s=60)
    assert [(r.queue, r.exit_code, r.number) for r in restarts] == [
        (Queue.ROUTER, -signal.SIGKILL, 1)
    ]
    assert fleet.supervisor.restarts == Counter({Queue.ROUTER: 1})
    assert restarts[0].delay_s == fleet.backoff.first_s
    # A worker killed on purpose stays down until the caller restarts it.
    fleet.kill_worker(Queue.STAGE2)
    time.sleep(fleet.backoff.first_s * 3)
    assert fleet.workers[Queue.STAGE2].poll() is not None
    assert fleet.supervisor.restarts[Queue.STAGE2] == 0
    fleet.restart_worker(Queue.STAGE2)
    # The restarted fleet reviews.
    dag = f"restarted-{uuid.uuid4().hex[:6]}"
    app = create_app(settings)
    body = {**GOOD, "dag_id": dag, "node_id": "n"}
    app.send_task(TaskName.STAGE1.value, args=[json.dumps(body)])
    app.close()
    db = redis.Redis.from_url(server.url)
    assert wait_until(lambda: _results(db, settings, dag)[f"{dag}:n:1"] == 1, timeout_s=30)
