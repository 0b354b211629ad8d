"""Three Redis kill -9s and restarts under load, at the production visibility timeout.

Messages a live worker held when its connection died (reserved, or running) used to wait
in ``unacked`` for the visibility timeout before anyone ran them again: 900 s by default.
They must come back as soon as Redis answers (``workers/fleet/recovery.py``): every review
on its stream, none lost, none twice, while the test waits a bounded time far below the
visibility timeout. Nothing here asserts on a duration: the time to recover is recorded.

An interrupted try is replayed, never counted (``workers/fleet/outage.py``): on the threads
pool a review that the three restarts each caught mid-Ceiling was dead-lettered. On gevent a
Stage 1 worker stopped consuming in about one run in ten, its remote control reading a
pub/sub connection kombu had polled under another socket's number
(``workers/fleet/transport/broadcast.py``).
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from tests.faults.support import (
    FaultServer,
    FleetUnderTest,
    count_stream,
    fresh_dag,
    in_flight,
    mixed,
    private_redis,
    record,
    running_fault_server,
    running_fleet,
    wait_quiet,
)
from tests.infrastructure import wait_until
from workers.fleet.queues import Queue
from workers.fleet.replay import REPLAY_HEADER
from workers.local.scratch import disown

pytestmark = [pytest.mark.integration, pytest.mark.slow]

REVIEWS = 240
RESTARTS = 3
DOWN_S = 5.0
#: The production visibility timeout: a review whose message waited for it could not land
#: within ``WAIT_S``.
VISIBILITY_TIMEOUT_S = 900
#: How long the test waits for the last review after the last restart (issue 22 asks for
#: 30 s; the wait is longer so that a loaded machine passes, and still far below 900 s).
WAIT_S = 150.0
#: How long the test waits for what workers still hold (retries on a countdown) to drain.
DRAIN_S = 60.0


@pytest.fixture(scope="module")
def server() -> Iterator[FaultServer]:
    with running_fault_server(latency_s=0.2) as handle:
        yield handle


#: The Procfile's threads; gevent, the launcher's pick where a model judge runs; prefork.
POOLS = [
    pytest.param("threads", id="threads"),
    pytest.param(None, id="gevent"),
    pytest.param("prefork", id="prefork"),
]


@pytest.mark.timeout(420)
@pytest.mark.parametrize("pool", POOLS)
def test_held_messages_come_back_when_redis_does_not_after_the_visibility_timeout(
    server: FaultServer, pool: str | None
) -> None:
    dag = fresh_dag("rr")
    requests = mixed(dag, [f"n{i:04d}" for i in range(REVIEWS)])
    held: list[int] = []
    extra = {"WINDAGS_VISIBILITY_TIMEOUT_S": str(VISIBILITY_TIMEOUT_S)}
    with (
        private_redis(appendonly=True) as redis_server,
        running_fleet(redis_server.url, "rr", server=server, extra=extra, pool=pool) as run,
    ):
        if pool is None:
            assert "gevent" in cast(list[str], run.fleet.workers[Queue.STAGE1].args)
        db, settings = run.db, run.settings
        assert settings.visibility_timeout_s == VISIBILITY_TIMEOUT_S
        keys = run.client.submit_many(requests)
        for _ in range(RESTARTS):
            # Kill it while workers hold messages: reserved, or running a model call.
            wait_until(lambda: db.hlen(settings.keys.unacked) > 0, timeout_s=60, every_s=0.05)
            held.append(int(db.hlen(settings.keys.unacked)))
            redis_server.restart(kill=True, down_s=DOWN_S)
            time.sleep(1.0)  # the workers reconnect and take work again before the next kill
        back_at = time.monotonic()
        finished = wait_until(lambda: not count_stream(db, settings, dag).lost(keys), WAIT_S, 0.5)
        done_s = time.monotonic() - back_at
        # What is still held drains: retries waiting for their countdown (a Stage 2 claim
        # the interrupted try held), each finding its review published. A stray
        # redelivery would land meanwhile.
        wait_quiet(db, settings, timeout_s=DRAIN_S)
        counted = count_stream(db, settings, dag)
        left = _left(run)
        clean = finished and not counted.errors and not counted.duplicated()
        logs = None if clean and not any(left.values()) else _keep_logs(run)
    lost = counted.lost(keys)
    record(
        f"redis_restarts_{pool or 'gevent'}",
        {
            "reviews": REVIEWS,
            "restarts": RESTARTS,
            "visibility_timeout_s": VISIBILITY_TIMEOUT_S,
            "held_at_each_kill": held,
            "all_done_after_last_restart_s": round(done_s, 1),
            "lost": len(lost),
            "duplicated": len(counted.duplicated()),
            "errors": len(counted.errors),
            **left,
        },
    )
    where = f"{left}; worker logs in {logs}"
    assert finished, f"{len(lost)} reviews not back: {lost[:5]}; {where}"
    assert counted.duplicated() == {}, where
    assert counted.errors == {}, f"{list(counted.errors.values())[:3]}; {where}"
    assert counted.total == REVIEWS
    assert left["unacked_left"] == 0, where
    assert left["reserved_left"] == 0, f"KEDA would count these in flight: {where}"


def _left(run: FleetUnderTest) -> dict[str, Any]:
    """What is still queued, unacked or counted in flight at the end."""
    keys, db = run.settings.keys, run.db
    left: dict[str, Any] = {f"{k}_left": n for k, n in in_flight(db, run.settings).items()}
    if left["unacked_left"]:
        records = cast(dict[bytes, bytes], db.hgetall(keys.unacked))
        left["unacked_records"] = [_brief(tag, raw) for tag, raw in list(records.items())[:5]]
    return left


def _brief(tag: bytes, raw: bytes) -> str:
    """An unacked record: its queue, replay mark and redelivered flag (what the logs lack)."""
    message, _, queue, *_ = json.loads(raw)  # and the owner, in a record of our take
    headers = message.get("headers") or {}
    flags = (headers.get(REPLAY_HEADER), headers.get("redelivered"), headers.get("retries"))
    return f"{tag.decode()[:8]} {queue} replay/redelivered/retries={flags}"


def _keep_logs(run: FleetUnderTest) -> str:
    """A copy of the workers' logs (the fleet removes its own when every worker exits 0)."""
    kept = tempfile.mkdtemp(prefix="windags-redis-restarts-")
    shutil.copytree(run.fleet.log_dir, kept, dirs_exist_ok=True)
    disown(Path(kept))  # the copy is the reader's: no later sweep removes it
    return kept
