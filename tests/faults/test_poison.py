"""A review whose Stage 2 kills its worker every time ends as a poison entry; the rest flow.

The real poison (docs/architecture.md, "What the stack promises"): a task that takes its
worker down with it (an OOM, a segfault), so no handler ever sees an exception. The fault
server reports each Stage 2 call that carries the marker and holds it unanswered; the test
then SIGKILLs the stage2 worker and starts a new one, every time. Redis redelivers the
unacked message after the visibility timeout and keeps no delivery count: only our try
counter (workers/fleet/tries.py) stops the loop, dead-lettering the review after
``max_task_tries`` deliveries.
"""

from __future__ import annotations

import json
import queue
import time
from collections.abc import Iterator
from typing import cast

import pytest

from schemas.result import ErrorCode
from tests.faults.support import (
    POISON_MARKER,
    FaultServer,
    count_stream,
    fresh_dag,
    marked,
    marker,
    mixed,
    record,
    running_fault_server,
    running_fleet,
)
from tests.infrastructure import FAST_RECOVERY_LIMITS, wait_until
from workers.fleet.queues import Queue
from workers.local.redis_server import PrivateRedis
from workers.results.stream import entry_fields, read_all

pytestmark = [pytest.mark.integration, pytest.mark.slow]

HEALTHY = 24
#: Limits short enough that each redelivery comes within seconds. One attempt per judge
#: call, timing out well after the kill lands (``SETTLE_S`` after the call arrives): with
#: the shared limits (1 s, two attempts) a kill delayed past 1 s by a busy test process let
#: the held call time out and retry, and that second call killed an innocent worker.
POISON_ENV = {
    **FAST_RECOVERY_LIMITS,
    "WINDAGS_JUDGE_TIMEOUT_S": "2",
    "WINDAGS_JUDGE_MAX_ATTEMPTS": "1",
}
#: Before each kill: healthy Stage 2 calls in flight next to the poisoned one finish.
SETTLE_S = 1.0


@pytest.fixture(scope="module")
def server() -> Iterator[FaultServer]:
    with running_fault_server() as handle:
        yield handle


@pytest.mark.timeout(240)
def test_a_review_that_kills_its_worker_every_time_is_dead_lettered_after_max_tries(
    server: FaultServer, own_redis: PrivateRedis
) -> None:
    arrivals: queue.Queue[float] = queue.Queue()
    dag = fresh_dag("poison")
    poison = marked("final_deliverable", dag, "poisoned")
    poison["output"] = {
        **poison["output"],
        "content": poison["output"]["content"] + f"\n{POISON_MARKER}\n",
    }
    healthy_nodes = [f"h{i:03d}" for i in range(HEALTHY)]
    healthy = mixed(dag, healthy_nodes)
    kills: list[float] = []
    healthy_s: float | None = None
    poison_s: float | None = None
    with running_fleet(own_redis.url, "poison", server=server, extra=POISON_ENV) as run:
        db, settings, fleet, client = run.db, run.settings, run.fleet, run.client
        server.on_poison({settings.stage2_model}, lambda _: arrivals.put(time.monotonic()))
        dead_key = settings.keys.dead_letter
        started = time.monotonic()
        [poison_key] = client.submit_many([poison])
        # Healthy reviews keep arriving while the poisoned one kills its workers.
        healthy_keys = client.submit_many(healthy[: HEALTHY // 2])
        time.sleep(1.0)
        healthy_keys += client.submit_many(healthy[HEALTHY // 2 :])

        def poison_done() -> bool:
            return count_stream(db, settings, dag).per_key[poison_key] > 0

        def healthy_done() -> bool:
            return not count_stream(db, settings, dag).lost(healthy_keys)

        # Each poisoned Stage 2 call kills its worker; a new worker takes its place.
        deadline = started + 200
        while time.monotonic() < deadline and (poison_s is None or healthy_s is None):
            try:
                arrivals.get(timeout=0.5)
            except queue.Empty:
                pass
            else:
                time.sleep(SETTLE_S)
                fleet.kill_worker(Queue.STAGE2)
                kills.append(round(time.monotonic() - started, 1))
                fleet.restart_worker(Queue.STAGE2)
            now = time.monotonic() - started
            if healthy_s is None and healthy_done():
                healthy_s = now
            if poison_s is None and poison_done():
                poison_s = now
        # Nothing more arrives once the review is dead-lettered (its message is acked).
        wait_until(lambda: not arrivals.empty(), timeout_s=settings.visibility_timeout_s + 7)
        late_arrivals = arrivals.qsize()
        counted = count_stream(db, settings, dag)
        dead_entries = cast(list[tuple[bytes, dict[bytes, bytes]]], db.xrange(dead_key))
        dead = [entry_fields(fields) for _, fields in dead_entries]
        stage2_tries = int(db.get(settings.keys.tries("stage2", poison_key)) or 0)
        # Entry ids are Redis server milliseconds: when each healthy result landed.
        landed_ms = sorted(
            int(e.entry_id.split("-")[0])
            for e in read_all(db, settings.keys.results(dag))
            if e.fields["review_key"] != poison_key
        )
    limit = settings.max_task_tries
    error = counted.errors.get(poison_key)
    poisoned_stage2_calls = sum(
        1
        for e in server.requests
        if (e.body or {}).get("model") == settings.stage2_model
        and marker("poisoned") in json.dumps((e.body or {}).get("messages"))
    )
    record(
        "poison",
        {
            "trigger": "stage2 worker SIGKILLed on each poisoned call",
            "max_task_tries": limit,
            "visibility_timeout_s": settings.visibility_timeout_s,
            "kills": len(kills),
            "kill_times_s": kills,
            "late_kills": late_arrivals,
            "healthy_submitted": len(healthy_keys),
            "healthy_results": sum(1 for k in healthy_keys if k in counted.results),
            "healthy_done_s": None if healthy_s is None else round(healthy_s, 1),
            "healthy_landing_span_s": round((landed_ms[-1] - landed_ms[0]) / 1000, 1)
            if landed_ms
            else None,
            "poison_code": error.code.value if error else None,
            "poison_tries": error.tries if error else None,
            "poison_stage2_deliveries": stage2_tries,
            "poison_entry_s": None if poison_s is None else round(poison_s, 1),
            "poison_model_calls": server.calls_per_marker(["poisoned"])["poisoned"],
            "poison_stage2_model_calls": poisoned_stage2_calls,
            "dead_lettered": len(dead),
            "duplicated": len(counted.duplicated()),
        },
    )
    assert error is not None and error.code is ErrorCode.POISON, counted.errors
    assert error.tries == limit
    assert "did not finish" in error.message and "died" in error.message
    assert len(kills) == limit  # one kill a delivery, then the counter stops the loop
    assert poisoned_stage2_calls == limit
    assert stage2_tries == limit + 1  # the delivery that gave up ran no model call
    assert late_arrivals == 0
    assert counted.per_key[poison_key] == 1
    assert [d["review_key"] for d in dead] == [poison_key]
    assert json.loads(dead[0]["raw"])["node_id"] == "poisoned"
    assert all(k in counted.results for k in healthy_keys), counted.lost(healthy_keys)
    assert counted.errors.keys() == {poison_key}
    assert counted.duplicated() == {}
