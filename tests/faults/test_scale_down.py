"""Workers stopped as an autoscaler stops them (SIGTERM) mid-run: nothing lost or repaid.

A scale-down picks its victim regardless of running work. Celery's warm shutdown must
let running reviews finish and hand reserved messages back at once, not leave them to
the visibility timeout; a review then still ends with exactly one stream entry, and no
model call is paid twice.
"""

from __future__ import annotations

import json
import time
from functools import partial

import pytest
import redis

from tests.faults.support import (
    CHURN_CONCURRENCY,
    MIX,
    FaultServer,
    count_stream,
    fresh_dag,
    mixed,
    record,
    running_fleet,
)
from tests.infrastructure import wait_until
from workers.fleet.queues import Queue
from workers.keys import Keys
from workers.local.redis_server import PrivateRedis

pytestmark = [pytest.mark.integration, pytest.mark.slow]

REVIEWS = 150


def _unacked_of(db: redis.Redis, keys: Keys, queue: Queue) -> int:
    """Messages of ``queue`` that some consumer holds (kombu's ``unacked`` hash)."""
    return sum(1 for raw in db.hvals(keys.unacked) if json.loads(raw)[2] == queue.value)


def _holds_work(db: redis.Redis, keys: Keys, queue: Queue) -> bool:
    return _unacked_of(db, keys, queue) > 0


@pytest.mark.timeout(240)
def test_warm_stopped_workers_hand_back_their_work_and_lose_nothing(
    slow_server: FaultServer, own_redis: PrivateRedis
) -> None:
    dag = fresh_dag("sd")
    nodes = [f"n{i:04d}" for i in range(REVIEWS)]
    requests = mixed(dag, nodes)
    stops: dict[str, dict[str, float | int]] = {}
    with running_fleet(
        own_redis.url, "sd", server=slow_server, concurrency=CHURN_CONCURRENCY
    ) as run:
        started = time.monotonic()
        keys = run.client.submit_many(requests)
        for victim in (Queue.STAGE1, Queue.STAGE2):
            # Stop it while it holds work, as a scale-down under load does; a fixed pause
            # could land where the worker holds nothing (Stage 2's work comes in bursts).
            names = run.settings.keys
            wait_until(partial(_holds_work, run.db, names, victim), timeout_s=30, every_s=0.05)
            held = _unacked_of(run.db, names, victim)
            code = run.fleet.stop_worker(victim)
            stops[victim.value] = {
                "at_s": round(time.monotonic() - started, 1),
                "held_before": held,
                "held_after": _unacked_of(run.db, names, victim),
                "queued_after": int(run.db.llen(names.queue(victim.value))),
                "exit_code": code,
            }
            run.fleet.restart_worker(victim)

        def all_in() -> bool:
            return not count_stream(run.db, run.settings, dag).lost(keys)

        finished = wait_until(all_in, timeout_s=120, every_s=0.5)
        done_s = time.monotonic() - started
        counted = count_stream(run.db, run.settings, dag)
    calls = slow_server.calls_per_marker(nodes)
    escalated = sum(1 for r in counted.results.values() if r.stage2 is not None)
    lost, duplicated = counted.lost(keys), counted.duplicated()
    record(
        "scale_down",
        {
            "submissions": len(keys),
            "stops": stops,
            "results": len(counted.results),
            "errors": len(counted.errors),
            "lost": len(lost),
            "duplicated": len(duplicated),
            "stage2_results": escalated,
            "model_calls": sum(calls.values()),
            "max_model_calls_per_review": max(calls.values()),
            "all_done_s": round(done_s, 1),
        },
    )
    for queue, stop in stops.items():
        assert stop["exit_code"] == 0, (queue, stop)
        assert stop["held_before"] > 0, f"the {queue} stop found no work: it proves nothing"
        # Handed back, not left for the visibility timeout.
        assert stop["held_after"] == 0, (queue, stop)
    assert finished, f"{len(lost)} reviews never reached the stream: {lost[:5]}"
    assert duplicated == {}
    assert counted.errors == {}, list(counted.errors.values())[:3]
    assert escalated == REVIEWS // len(MIX)
    # Every review judged once per model stage: the Wall past the Floor, then Stage 2.
    walled = sum(1 for r in counted.results.values() if r.stage1.floor.passed)
    assert walled == REVIEWS - REVIEWS // len(MIX)  # the Floor failures call no model
    assert sum(calls.values()) == walled + escalated
