"""A Stage 2 try that a Redis restart cuts off, inside its handler, is replayed, not counted.

Under the threads pool a running task outlives its worker's connection: the Ceiling's
model call comes back while Redis is down, and the handler's next write meets a
connection error. That try is the outage's, not the task's (issue 22, item 3): it is
handed back as a replay of itself (``workers/fleet/replay.py``), never counted as a failed
try, so a review that ``max_task_tries`` restarts each interrupt mid-Ceiling still gets its
result. A task that kills its worker every time is still dead-lettered (``test_poison.py``).
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from schemas.result import ReviewResult
from tests.faults.support import (
    FaultServer,
    count_stream,
    fresh_dag,
    marked,
    private_redis,
    record,
    running_fault_server,
    running_fleet,
    wait_quiet,
)
from tests.infrastructure import wait_until
from workers.fleet.queues import Queue
from workers.settings import Settings

pytestmark = [pytest.mark.integration, pytest.mark.slow]

#: As many restarts as tries allowed: each interruption counted would dead-letter the review.
TRIES = 2
#: Every Stage 2 model call takes this long: each restart lands while one is running.
STAGE2_CALL_S = 2.0
#: Redis stays down past the end of the running call: the handler's next write fails.
DOWN_S = STAGE2_CALL_S + 2.0
#: Far below the visibility timeout (900 s): a review that waited for it would fail here.
WAIT_S = 90.0
ENV = {
    "WINDAGS_MAX_TASK_TRIES": str(TRIES),
    "WINDAGS_VISIBILITY_TIMEOUT_S": "900",
    # One model call per try, answered long before it would time out.
    "WINDAGS_JUDGE_TIMEOUT_S": "4",
    "WINDAGS_JUDGE_MAX_ATTEMPTS": "1",
}


@pytest.fixture(scope="module")
def server() -> Iterator[FaultServer]:
    with running_fault_server(stage2_latency_s=STAGE2_CALL_S) as handle:
        yield handle


def _stage2_calls(server: FaultServer, settings: Settings) -> int:
    return sum(1 for e in server.requests if (e.body or {}).get("model") == settings.stage2_model)


def _stage2_called(server: FaultServer, settings: Settings, times: int) -> bool:
    return wait_until(lambda: _stage2_calls(server, settings) >= times, 60, 0.05)


@pytest.mark.timeout(240)
def test_a_try_a_redis_restart_interrupts_inside_its_handler_is_not_counted(
    server: FaultServer,
) -> None:
    dag = fresh_dag("it")
    request = marked("final_deliverable", dag, "interrupted")  # escalated by a hard rule
    with (
        private_redis(appendonly=True) as redis_server,
        running_fleet(redis_server.url, "it", server=server, extra=ENV, pool="threads") as run,
    ):
        db, settings = run.db, run.settings
        stage2 = run.fleet.workers[Queue.STAGE2]
        [key] = run.client.submit_many([request])
        for restart in range(1, TRIES + 1):
            # A Stage 2 try is running: its model call arrived, its answer comes after the kill.
            assert _stage2_called(server, settings, restart), f"no call for restart {restart}"
            redis_server.restart(kill=True, down_s=DOWN_S)
        back_at = time.monotonic()
        landed = wait_until(lambda: count_stream(db, settings, dag).total > 0, WAIT_S, 0.25)
        landed_s = time.monotonic() - back_at
        wait_quiet(db, settings)  # a second entry would land before this
        counted = count_stream(db, settings, dag)
        tries = int(db.get(settings.keys.tries(Queue.STAGE2.value, key)) or 0)
        calls = _stage2_calls(server, settings)
        assert stage2.poll() is None, "the Stage 2 worker exited"
    record(
        "interrupted_stage2_try",
        {
            "restarts": TRIES,
            "max_task_tries": TRIES,
            "stage2_calls": calls,
            "stage2_tries_counted": tries,
            "result_after_last_restart_s": round(landed_s, 1),
        },
    )
    assert landed, f"no entry {WAIT_S} s after the last restart"
    assert counted.per_key[key] == 1, counted.per_key
    assert key in counted.results, counted.errors.get(key)
    assert isinstance(counted.results[key], ReviewResult)
    assert counted.results[key].stage2 is not None
    # The first try counted itself; what the outages interrupted, replayed, counted nothing.
    assert tries == 1, f"{tries} Stage 2 tries counted for one the restarts interrupted"
