"""A try that breaks its own Redis connection every time is dead-lettered, not replayed forever.

A try that an outage cut off is handed back as a replay and counts no try
(``workers/fleet/outage.py``): so a try that kills its own connection, every time, was
replayed forever and never reached the dead letters. Here the server drops the client
for real: the review's Stage 2 cache entry is larger than the Redis output buffer a
normal client may hold, so each try's read of it (``judge_claim.CeilingClaim.ceiling``,
after the count found it kept) makes Redis close that connection, redis-py's retries
included, deterministically. After
``max_task_replays`` hand-backs each one counts a try (``workers/fleet/replay.py``), and
``max_task_tries`` later the review is a poison entry on its stream and on the dead
letters, while the reviews beside it, Stage 2 ones included, complete once each.
"""

from __future__ import annotations

import json
from typing import cast

import pytest

from schemas.request import ReviewRequest
from schemas.result import ErrorCode
from tests.faults.support import (
    count_stream,
    fresh_dag,
    in_flight,
    marked,
    mixed,
    private_redis,
    record,
    running_fleet,
    wait_quiet,
)
from tests.infrastructure import wait_until
from workers.fleet.queues import Queue
from workers.results.stream import entry_fields

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TRIES = 2
REPLAYS = 2
ENV = {"WINDAGS_MAX_TASK_TRIES": str(TRIES), "WINDAGS_MAX_TASK_REPLAYS": str(REPLAYS)}
#: The most a normal client's pending replies may hold before Redis closes it (no soft limit).
OUTPUT_LIMIT = "normal 1mb 0 0"
#: Twice that limit: no reply carrying it ever leaves the server.
TOO_LARGE = b"x" * 2_000_000
HEALTHY = 6
#: Bounded waits, far above what the run needs (each try spends about 4 s in redis-py's
#: retries): a review that was replayed forever would never land within them.
WAIT_S = 150.0
DRAIN_S = 60.0

POOLS = [
    pytest.param("threads", id="threads"),
    pytest.param("gevent", id="gevent"),
    pytest.param("prefork", id="prefork"),
]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("pool", POOLS)
def test_a_try_that_kills_its_own_connection_every_time_is_dead_lettered(pool: str) -> None:
    dag = fresh_dag("rl")
    poison = marked("final_deliverable", dag, "breaks-its-connection")  # escalated
    poison_key = ReviewRequest.model_validate_json(json.dumps(poison)).review_key
    healthy = mixed(dag, [f"h{i:02d}" for i in range(HEALTHY)])
    with (
        private_redis() as redis_server,
        running_fleet(redis_server.url, "rl", extra=ENV, pool=pool) as run,
    ):
        db, settings = run.db, run.settings
        # Hostile data of this review only: every read of it drops the reader's connection.
        db.set(settings.keys.stage2_report(poison_key), TOO_LARGE)
        db.config_set("client-output-buffer-limit", OUTPUT_LIMIT)
        [submitted] = run.client.submit_many([poison])
        healthy_keys = run.client.submit_many(healthy)
        keys = [poison_key, *healthy_keys]
        finished = wait_until(lambda: not count_stream(db, settings, dag).lost(keys), WAIT_S, 0.5)
        # The dead-lettered message was acked: nothing is left queued, held or unacked.
        drained = wait_quiet(db, settings, DRAIN_S)
        counted = count_stream(db, settings, dag)
        dead_entries = cast(
            list[tuple[bytes, dict[bytes, bytes]]], db.xrange(settings.keys.dead_letter)
        )
        dead = [entry_fields(fields) for _, fields in dead_entries]
        stage2_tries = int(db.get(settings.keys.tries(Queue.STAGE2.value, poison_key)) or 0)
        left = in_flight(db, settings)
    error = counted.errors.get(poison_key)
    record(
        f"replay_limit_{pool}",
        {
            "max_task_tries": TRIES,
            "max_task_replays": REPLAYS,
            "stage2_tries_counted": stage2_tries,
            "healthy_results": sum(1 for k in healthy_keys if k in counted.results),
            "poison_message": error.message if error else None,
        },
    )
    assert submitted == poison_key
    assert finished, f"not on the stream: {counted.lost(keys)}; {left}"
    assert drained, left
    assert error is not None and error.code is ErrorCode.POISON, counted.errors
    assert error.tries == TRIES
    assert f"handed back more than {REPLAYS} times" in error.message, error.message
    # The first try counted, the replays up to the limit did not, each one past it did,
    # and so did the delivery that gave up.
    assert stage2_tries == TRIES + 1
    assert [d["review_key"] for d in dead] == [poison_key]
    assert json.loads(dead[0]["raw"])["node_id"] == "breaks-its-connection"
    assert all(k in counted.results for k in healthy_keys), counted.errors
    assert counted.errors.keys() == {poison_key}
    assert counted.duplicated() == {}
