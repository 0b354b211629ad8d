"""Redis killed mid-run and restarted: nothing acknowledged is lost, the fleet resumes."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from typing import cast

import pytest

from tests.faults.support import (
    FaultServer,
    count_stream,
    fresh_dag,
    marked,
    mixed,
    private_redis,
    record,
    running_fault_server,
    running_fleet,
    wait_quiet,
)
from tests.infrastructure import wait_until
from workers.client import ReviewClient
from workers.errors import BrokerUnavailableError
from workers.fleet.queues import Queue
from workers.local.launcher import LocalFleet
from workers.local.redis_server import PrivateRedis

pytestmark = [pytest.mark.integration, pytest.mark.slow]

BEFORE = 180
AFTER = 30
OUTAGE_S = 6.0
SUBMIT_BOUND_S = 15.0


@pytest.fixture(scope="module")
def server() -> Iterator[FaultServer]:
    with running_fault_server(latency_s=0.1) as handle:
        yield handle


@pytest.fixture(scope="module")
def aof_redis(faults_redis_url: str) -> Iterator[PrivateRedis]:
    """A redis-server with AOF, every acknowledged write in it (``PrivateRedis``).

    Production's everysec adds an fsync a second, for power loss, and a window a kill -9
    can fall in (docs/how-to/kubernetes.md): Redis's trade-off, not the fleet's.
    """
    with private_redis(appendonly=True) as server:
        yield server


def _pinged(fleet: LocalFleet, queue: Queue) -> bool:
    """Whether ``queue``'s worker answers the probes' command: a ping from a new process."""
    command = [sys.executable, "-m", "celery", "-A", "workers.fleet.worker", "inspect", "ping"]
    command += ["-d", fleet.worker_name(queue), "--timeout", "5"]
    done = subprocess.run(command, env=fleet.env, capture_output=True, timeout=60, check=False)
    return done.returncode == 0


def _outage_submit(client: ReviewClient, body: dict[str, object]) -> tuple[str, float]:
    started = time.monotonic()
    try:
        client.submit(body)
    except BrokerUnavailableError:
        return "BrokerUnavailableError", time.monotonic() - started
    except Exception as exc:  # the test's point: any other type is a defect
        return type(exc).__name__, time.monotonic() - started
    return "accepted", time.monotonic() - started


#: The Procfile's threads, and the launcher's pick with a model judge: Stage 1 and Stage 2
#: on gevent (a green worker's consumer restart must not wait on its remote control).
POOLS = [pytest.param("threads", id="threads"), pytest.param(None, id="gevent")]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("pool", POOLS)
def test_a_redis_restart_loses_no_submission_and_workers_resume(
    server: FaultServer, aof_redis: PrivateRedis, pool: str | None
) -> None:
    dag = fresh_dag("br")
    before = mixed(dag, [f"b{i:04d}" for i in range(BEFORE)])
    after = mixed(dag, [f"a{i:04d}" for i in range(AFTER)])
    outage: list[tuple[str, float]] = []
    with running_fleet(aof_redis.url, "br", server=server, pool=pool) as run:
        if pool is None:
            assert "gevent" in cast(list[str], run.fleet.workers[Queue.STAGE1].args)
        db, settings, client = run.db, run.settings, run.client
        keys = client.submit_many(before)
        time.sleep(1.5)  # part of the batch is done, part in flight, part queued
        done_at_kill = len(count_stream(db, settings, dag).results)
        aof_redis.stop(kill=True)
        down_at = time.monotonic()
        for i in range(3):
            outage.append(_outage_submit(client, marked("good_python", dag, f"o{i}")))
        time.sleep(max(0.0, OUTAGE_S - (time.monotonic() - down_at)))
        restarted = PrivateRedis(
            port=aof_redis.port, appendonly=True, directory=aof_redis.directory
        ).start()
        aof_redis.process = restarted.process
        back_at = time.monotonic()
        survived_in_queue = sum(int(db.llen(settings.keys.queue(q.value))) for q in Queue) + int(
            db.hlen(settings.keys.unacked)
        )
        after_keys = client.submit_many(after)

        def resumed() -> bool:
            return not count_stream(db, settings, dag).lost(after_keys)

        resumed_ok = wait_until(resumed, timeout_s=60, every_s=0.5)
        resume_s = time.monotonic() - back_at
        finished = wait_until(
            lambda: not count_stream(db, settings, dag).lost(keys), timeout_s=90, every_s=1.0
        )
        all_done_s = time.monotonic() - back_at
        # What the probes ask: every worker answers Celery's ping again (a gevent worker's
        # remote control stops while its consumer reconnects and must come back with it).
        answering = {q.value: any(_pinged(run.fleet, q) for _ in range(3)) for q in Queue}
        wait_quiet(db, settings)  # a stray redelivery would land before this
        counted = count_stream(db, settings, dag)
        alive = all(p.poll() is None for p in run.fleet.workers.values())
    lost = counted.lost(keys + after_keys)
    outage_keys = [f"{dag}:o{i}:1" for i in range(3)]
    record(
        "broker_restart",
        {
            "submitted_before_kill": len(keys),
            "done_at_kill": done_at_kill,
            "in_queue_after_restart": survived_in_queue,
            "outage_submits": [kind for kind, _ in outage],
            "outage_submit_s": [round(s, 2) for _, s in outage],
            "outage_s": OUTAGE_S,
            "submitted_after_restart": len(after_keys),
            "results": len(counted.results),
            "errors": len(counted.errors),
            "lost": len(lost),
            "duplicated": len(counted.duplicated()),
            "outage_reviews_on_stream": sum(counted.per_key[k] for k in outage_keys),
            "resume_s": round(resume_s, 1),
            "all_done_after_restart_s": round(all_done_s, 1),
            "workers_alive": alive,
            "workers_answering_ping": answering,
        },
    )
    assert [kind for kind, _ in outage] == ["BrokerUnavailableError"] * 3
    assert max(s for _, s in outage) < SUBMIT_BOUND_S
    assert resumed_ok, "workers did not resume consuming after the restart"
    assert finished, f"{len(lost)} submissions made before the kill were lost: {lost[:5]}"
    assert lost == []
    assert counted.duplicated() == {}
    assert counted.errors == {}, list(counted.errors.values())[:3]
    assert alive
    assert all(answering.values()), answering
