"""A worker killed with SIGKILL, at the production visibility timeout: what it held comes back.

Issue 22, item 3: "a worker that restarts restores what it held". A worker killed with
SIGKILL (an OOM kill, ``kill -9``, a lost node) hands nothing back: its deliveries stayed
in ``unacked`` until the visibility timeout, 900 s by default. Each record now names its
owner, whose lease expires soon after the kill, and the restore sweep of any worker hands
those records back (``workers/fleet/transport/owner_sweep.py``). Every review must reach
its stream exactly once, within a bound far below the visibility timeout; the time the
killed workers' deliveries took to come back is recorded, not asserted beyond that bound.
"""

from __future__ import annotations

import json
import time
from functools import partial
from typing import Any, cast

import pytest
import redis

from tests.faults.support import (
    CHURN_CONCURRENCY,
    MIX,
    FaultServer,
    FleetUnderTest,
    count_stream,
    fresh_dag,
    in_flight,
    mixed,
    private_redis,
    record,
    running_fleet,
    wait_quiet,
)
from tests.infrastructure import wait_until
from workers.fleet.queues import Queue
from workers.keys import Keys

pytestmark = [pytest.mark.integration, pytest.mark.slow]

REVIEWS = 150
#: The production visibility timeout: a delivery that waited for it could not land in time.
VISIBILITY_TIMEOUT_S = 900
#: How long the test waits for the reviews after the last kill: far below 900 s, generous
#: on a loaded two-core machine (a lease lives 30 s after the kill, a sweep runs every 5 s).
WAIT_S = 120.0
#: How long the test waits for what workers still hold to drain once every review is in.
DRAIN_S = 60.0

#: The Procfile's threads, and gevent (the launcher's pick for the stages with a model judge).
POOLS = [pytest.param("threads", id="threads"), pytest.param(None, id="gevent")]


def _held_by(db: redis.Redis, keys: Keys, queue: Queue) -> dict[str, float]:
    """Tag -> index score of each delivery of ``queue`` some worker holds now."""
    records = cast(dict[bytes, bytes], db.hgetall(keys.unacked))
    held = {}
    for tag, raw in records.items():
        if json.loads(raw)[2] == queue.value:
            score = db.zscore(keys.unacked_index, tag)
            if score is not None:
                held[tag.decode()] = float(score)
    return held


def _holds(db: redis.Redis, keys: Keys, queue: Queue) -> bool:
    return bool(_held_by(db, keys, queue))


def _all_back(db: redis.Redis, keys: Keys, deliveries: dict[str, float]) -> bool:
    """Whether none of ``deliveries`` is in ``unacked`` still (a new take has a new score)."""
    index = keys.unacked_index
    return all(db.zscore(index, tag) != score for tag, score in deliveries.items())


@pytest.mark.timeout(420)
@pytest.mark.parametrize("pool", POOLS)
def test_a_sigkilled_workers_deliveries_come_back_long_before_the_visibility_timeout(
    slow_server: FaultServer, pool: str | None
) -> None:
    dag = fresh_dag("rs")
    requests = mixed(dag, [f"n{i:04d}" for i in range(REVIEWS)])
    extra = {"WINDAGS_VISIBILITY_TIMEOUT_S": str(VISIBILITY_TIMEOUT_S)}
    kills: dict[str, dict[str, Any]] = {}
    with (
        private_redis() as redis_server,
        running_fleet(
            redis_server.url,
            "rs",
            server=slow_server,
            extra=extra,
            concurrency=CHURN_CONCURRENCY,
            pool=pool,
        ) as run,
    ):
        db, keys = run.db, run.settings.keys
        assert run.settings.visibility_timeout_s == VISIBILITY_TIMEOUT_S
        keys_submitted = run.client.submit_many(requests)
        killed: dict[str, dict[str, float]] = {}
        for victim in (Queue.STAGE1, Queue.STAGE2):
            # Kill it while it holds deliveries (running, or reserved behind them).
            wait_until(partial(_holds, db, keys, victim), timeout_s=60, every_s=0.05)
            killed[victim.value] = _held_by(db, keys, victim)
            run.fleet.kill_worker(victim)
            kills[victim.value] = {"held": len(killed[victim.value]), "at": time.monotonic()}
            run.fleet.restart_worker(victim)
        last_kill = max(k["at"] for k in kills.values())
        for queue, deliveries in killed.items():
            back = wait_until(partial(_all_back, db, keys, deliveries), WAIT_S, 0.5)
            kills[queue]["restored_after_s"] = round(time.monotonic() - kills[queue]["at"], 1)
            kills[queue]["restored"] = back
            del kills[queue]["at"]
        finished = wait_until(
            lambda: not count_stream(db, run.settings, dag).lost(keys_submitted),
            timeout_s=max(1.0, WAIT_S - (time.monotonic() - last_kill)),
            every_s=0.5,
        )
        done_s = time.monotonic() - last_kill
        # A stray redelivery would land meanwhile; what workers hold drains.
        wait_quiet(db, run.settings, timeout_s=DRAIN_S)
        counted = count_stream(db, run.settings, dag)
        left = _left(run)
    lost = counted.lost(keys_submitted)
    record(
        f"restart_restores_{pool or 'gevent'}",
        {
            "reviews": REVIEWS,
            "visibility_timeout_s": VISIBILITY_TIMEOUT_S,
            "kills": kills,
            "all_done_after_last_kill_s": round(done_s, 1),
            "lost": len(lost),
            "duplicated": len(counted.duplicated()),
            "errors": len(counted.errors),
            **left,
        },
    )
    for queue, kill in kills.items():
        assert kill["held"] > 0, f"the {queue} kill found nothing held: it proves nothing"
        assert kill["restored"], f"{queue}'s deliveries still held: {kills}"
    assert finished, f"{len(lost)} reviews not back within {WAIT_S:.0f}s: {lost[:5]}"
    assert counted.duplicated() == {}
    assert counted.errors == {}, list(counted.errors.values())[:3]
    assert counted.total == REVIEWS
    escalated = sum(1 for r in counted.results.values() if r.stage2 is not None)
    assert escalated == REVIEWS // len(MIX)
    assert left == {"unacked_left": 0, "queued_left": 0, "reserved_left": 0}


def _left(run: FleetUnderTest) -> dict[str, int]:
    """What is still queued, unacked or counted in flight."""
    return {f"{k}_left": n for k, n in in_flight(run.db, run.settings).items()}
