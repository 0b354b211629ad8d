"""A Stage 2 worker killed between the judgement and the entry: published once, paid once.

After the model call, Stage 2 keeps the Ceiling's report, releases its claim and records
the review's labels in one round trip, and publishes the entry (with the attempt record,
the mark and the delivery's ack) in the next (``workers.fleet.judge_claim``,
``workers.records.bookkeeping``). Here the worker dies by SIGKILL between the two
(``tests/faults/dying_stage2.py``), the delivery comes back, and a healthy worker
finishes the review: its entry is on the stream once, the judge was never called again,
its cost charged once and its Stage 2 label recorded once.
"""

from __future__ import annotations

import json
import signal
import subprocess

import pytest
import redis

from schemas.request import ReviewRequest
from schemas.result import ReviewResult
from tests.faults.support import (
    FaultServer,
    count_stream,
    fresh_dag,
    marked,
    marker,
    private_redis,
    running_fault_server,
    running_fleet,
)
from tests.infrastructure import wait_until
from workers.fleet.queues import Queue
from workers.local.worker_commands import THREADS, worker_command
from workers.records.outcomes import OutcomeStore
from workers.settings import Settings

pytestmark = [pytest.mark.integration, pytest.mark.slow]

#: Short limits (they still nest), so the dead worker's delivery is restored in seconds:
#: one judge call may take 1 s, Stage 2 makes at most five.
FAST = {
    "WINDAGS_JUDGE_TIMEOUT_S": "1",
    "WINDAGS_JUDGE_MAX_ATTEMPTS": "1",
    "WINDAGS_STAGE1_SOFT_LIMIT_S": "2",
    "WINDAGS_STAGE1_HARD_LIMIT_S": "3",
    "WINDAGS_STAGE2_SOFT_LIMIT_S": "6",
    "WINDAGS_STAGE2_HARD_LIMIT_S": "7",
    "WINDAGS_VISIBILITY_TIMEOUT_S": "8",
}
NODE = "killed-after-judging"


def _stage2_calls(server: FaultServer, model: str) -> int:
    """Requests to the Stage 2 model about the review (its marker in the messages)."""
    return sum(
        1
        for exchange in server.requests
        if (exchange.body or {}).get("model") == model
        and marker(NODE) in str((exchange.body or {}).get("messages"))
    )


@pytest.mark.timeout(240)
def test_a_stage2_worker_killed_between_judgement_and_entry_publishes_once_and_pays_once() -> None:
    dag = fresh_dag("s2k")
    body = marked("final_deliverable", dag, NODE)  # escalated by the router's hard rule
    key = ReviewRequest.model_validate_json(json.dumps(body)).review_key
    with (
        private_redis() as redis_server,
        running_fault_server() as model,
        running_fleet(redis_server.url, "s2k", server=model, extra=FAST, pool=THREADS) as run,
    ):
        db, settings, keys = run.db, run.settings, run.settings.keys
        stage2_model = settings.stage2_model
        run.fleet.stop_worker(Queue.STAGE2)
        command = worker_command(Queue.STAGE2, concurrency=1, name=f"dying-{dag}@%h")
        command[command.index("workers.fleet.worker")] = "tests.faults.dying_stage2"
        dying = subprocess.Popen(command, env=run.fleet.env, start_new_session=True)
        try:
            assert run.client.submit_many([body]) == [key]
            assert dying.wait(timeout=120) == -signal.SIGKILL
            # Where the kill landed: the report kept, the claim released, the label in,
            # the entry not yet written, the delivery unacked.
            paid = _stage2_calls(model, stage2_model)
            left = {
                "report kept": bool(db.exists(keys.stage2_report(key))),
                "claim held": bool(db.exists(keys.stage2_claim(key))),
                "labels": _stage2_labels(db, settings, dag),
                "published": key in count_stream(db, settings, dag).results,
                "unacked": int(db.hlen(keys.unacked)),
            }
            run.fleet.restart_worker(Queue.STAGE2)
            done = wait_until(lambda: key in count_stream(db, settings, dag).results, 90, 0.5)
        finally:
            if dying.poll() is None:
                dying.kill()
            dying.wait(timeout=10)
        counted = count_stream(db, settings, dag)
        charged = float(db.get(keys.cost(dag)) or 0)
        labels = _stage2_labels(db, settings, dag)
    assert paid >= 1
    assert left == {
        "report kept": True,
        "claim held": False,
        "labels": 1,
        "published": False,
        "unacked": 1,
    }
    assert done, counted.errors
    assert counted.per_key == {key: 1} and counted.duplicated() == {}
    result = counted.results[key]
    assert isinstance(result, ReviewResult) and result.stage2 is not None
    assert _stage2_calls(model, stage2_model) == paid, "the redelivery called the judge again"
    assert charged == pytest.approx(result.envelope.review_cost_usd)
    assert labels == 1


def _stage2_labels(db: redis.Redis, settings: Settings, dag: str) -> int:
    """Stage 2 labels recorded for the review's attempt."""
    outcomes = OutcomeStore(db, settings.keys, kept=100, ttl_s=60)
    return sum(1 for o in outcomes.export() if o.dag_id == dag and o.source.value == "stage2")
