"""The fleet end to end: real Redis, one real worker process per queue."""

from __future__ import annotations

import json

import pytest
import redis
from celery import Celery

from schemas.result import ErrorCode, EscalationReason, ReviewError, ReviewResult
from tests.infrastructure import wait_until
from tests.integration.support import fresh_dag, read_stream, sample
from workers.client import ReviewClient
from workers.errors import InvalidRequest
from workers.fleet.app import create_app
from workers.fleet.queues import Queue, TaskName
from workers.local.launcher import LocalFleet
from workers.settings import Settings

pytestmark = pytest.mark.integration


@pytest.fixture
def app(settings: Settings) -> Celery:
    return create_app(settings)


def _tries(db: redis.Redis, settings: Settings, stage: str, key: str) -> int:
    raw = db.get(settings.keys.tries(stage, key))
    return int(raw) if raw is not None else 0


def test_every_submitted_review_reaches_its_dags_stream_as_a_typed_result(
    fleet: LocalFleet, client: ReviewClient, redis_db: redis.Redis, settings: Settings
) -> None:
    dag = fresh_dag()
    names = [
        "good_python.json",
        "floor_failure_python.json",
        "final_deliverable.json",
        "example2_no_escalation.json",
        "example3_conflicting_signals.json",
    ]
    keys = client.submit_many([sample(n, dag_id=dag) for n in names])

    assert wait_until(lambda: redis_db.xlen(settings.keys.results(dag)) >= len(keys))
    entries = read_stream(redis_db, settings, dag)
    results = {p.node_id: p for _, p in entries if isinstance(p, ReviewResult)}
    assert sorted(f"{dag}:{n}:1" for n in results) == sorted(keys)
    assert results["slugify"].decision.value == "accept"
    assert results["flask-route"].stage1.floor.passed is False
    assert results["release-notes"].escalation.reason is EscalationReason.FINAL_DELIVERABLE
    assert all(p.envelope is not None for p in results.values())


def test_a_floor_failure_never_reaches_stage2_and_an_escalated_node_does(
    fleet: LocalFleet, client: ReviewClient, redis_db: redis.Redis, settings: Settings
) -> None:
    dag = fresh_dag()
    broken = sample("floor_failure_python.json", dag_id=dag, flags={"final_deliverable": True})
    escalated = sample("final_deliverable.json", dag_id=dag)
    client.submit_many([broken, escalated])

    assert wait_until(lambda: redis_db.xlen(settings.keys.results(dag)) >= 2)
    results = {
        p.node_id: p for _, p in read_stream(redis_db, settings, dag) if isinstance(p, ReviewResult)
    }
    floor_failed = results["flask-route"]
    assert floor_failed.stage2 is None
    assert floor_failed.escalation.escalate is False
    assert floor_failed.escalation.suppressed_by == "floor_failed"
    assert _tries(redis_db, settings, "stage2", f"{dag}:flask-route:1") == 0
    assert results["release-notes"].stage2 is not None
    assert _tries(redis_db, settings, "stage2", f"{dag}:release-notes:1") == 1


def test_the_same_task_delivered_twice_publishes_one_result(
    fleet: LocalFleet, app: Celery, redis_db: redis.Redis, settings: Settings
) -> None:
    dag = fresh_dag()
    plain = json.dumps(sample("good_python.json", dag_id=dag))
    escalated = json.dumps(sample("final_deliverable.json", dag_id=dag))
    for body in (plain, plain, escalated, escalated, plain):
        app.send_task(TaskName.STAGE1.value, args=[body])

    # A first delivery writes no try count (workers/fleet/guard.py): wait for the queues.
    assert wait_until(lambda: redis_db.xlen(settings.keys.results(dag)) >= 2)
    assert wait_until(lambda: _all_taken_and_acked(redis_db, settings))
    # Let any straggling duplicate finish before counting.
    wait_until(lambda: False, timeout_s=2)
    keys = [fields["review_key"] for fields, _ in read_stream(redis_db, settings, dag)]
    assert sorted(keys) == sorted([f"{dag}:slugify:1", f"{dag}:release-notes:1"])


def _all_taken_and_acked(client: redis.Redis, settings: Settings) -> bool:
    """Every queue of the fleet empty and nothing delivered unacked: all work done."""
    keys = settings.keys
    waiting = sum(int(client.llen(keys.queue(q.value))) for q in Queue)
    return waiting == 0 and int(client.hlen(keys.unacked)) == 0


def test_a_bad_request_enqueued_by_another_producer_becomes_an_error_entry(
    fleet: LocalFleet, app: Celery, redis_db: redis.Redis, settings: Settings
) -> None:
    dag = fresh_dag()
    bad = sample("good_python.json", dag_id=dag)
    bad["skill"]["success_rate"] = 7
    app.send_task(TaskName.STAGE1.value, args=[json.dumps(bad)])
    app.send_task(TaskName.STAGE1.value, args=["{not json"])

    assert wait_until(lambda: redis_db.xlen(settings.keys.results(dag)) >= 1)
    [(fields, error)] = read_stream(redis_db, settings, dag)
    assert fields["kind"] == "error"
    assert isinstance(error, ReviewError)
    assert error.code is ErrorCode.INVALID_REQUEST
    assert error.field == "skill.success_rate"
    unroutable = settings.keys.unroutable
    assert wait_until(lambda: redis_db.xlen(unroutable) >= 1)


def test_the_client_refuses_a_bad_request_at_once_naming_the_field(
    client: ReviewClient,
) -> None:
    bad = sample("good_python.json")
    bad["output"]["kind"] = "yml"
    with pytest.raises(InvalidRequest) as caught:
        client.submit(bad)
    assert caught.value.field == "output.kind"


def test_a_dead_subscribers_pending_results_are_claimed_by_its_group(
    fleet: LocalFleet, client: ReviewClient, redis_db: redis.Redis, settings: Settings
) -> None:
    dag = fresh_dag()
    nodes = [sample("good_python.json", dag_id=dag, node_id=f"n{i}") for i in range(6)]
    client.submit_many(nodes)
    assert wait_until(lambda: redis_db.xlen(settings.keys.results(dag)) >= 6)

    doomed = client.subscription(dag, "runtime", "doomed", claim_idle_ms=200)
    taken = doomed.poll()
    assert len(taken) == 6  # read, never acked: this consumer "dies" here
    survivor = client.subscription(dag, "runtime", "survivor", claim_idle_ms=200)
    wait_until(lambda: False, timeout_s=0.4)
    handled: list[str] = []
    while len(handled) < 6:
        batch = survivor.poll()
        assert batch, "the survivor stopped receiving before taking over every entry"
        for delivery in batch:
            handled.append(delivery.review_key)
            delivery.ack()
    assert sorted(handled) == sorted(f"{dag}:n{i}:1" for i in range(6))
    assert survivor.poll() == []
    assert redis_db.xpending(settings.keys.results(dag), "runtime")["pending"] == 0
