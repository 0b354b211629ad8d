"""Tasks sent with the wrong number of arguments end as error entries, never silent drops.

Celery checks no arity on the worker: a task function that does not take the arguments
raises before its handler runs, and the message is rejected (deleted on Redis) unseen.
"""

from __future__ import annotations

import json
import time
from typing import Any, cast

import pytest
from celery import Celery

from schemas.result import ErrorCode, ReviewError
from tests.faults.support import (
    FleetUnderTest,
    count_stream,
    fresh_dag,
    record,
    sample,
    wait_quiet,
)
from tests.infrastructure import wait_until
from workers.fleet.queues import Queue, TaskName
from workers.results.stream import entry_fields, read_all

pytestmark = [pytest.mark.integration, pytest.mark.slow]


QUEUE_OF = {
    TaskName.STAGE1: Queue.STAGE1,
    TaskName.ROUTER: Queue.ROUTER,
    TaskName.STAGE2: Queue.STAGE2,
}


def _calls(dag: str) -> list[tuple[TaskName, list[Any], dict[str, Any], str | None, ErrorCode]]:
    """(task, args, kwargs, node the entry is about or None when unroutable, code)."""

    def body(node: str) -> str:
        return json.dumps(sample("final_deliverable", dag_id=dag, node_id=node))

    s1, rt, s2 = TaskName.STAGE1, TaskName.ROUTER, TaskName.STAGE2
    invalid, poison = ErrorCode.INVALID_REQUEST, ErrorCode.POISON
    return [
        (s1, [], {}, None, invalid),
        (s1, [body("s1-two"), "surplus"], {}, "s1-two", invalid),
        (s1, [body("s1-three"), "a", "b"], {}, "s1-three", invalid),
        (s1, [], {"raw": body("s1-kw")}, None, invalid),
        (rt, [], {}, None, poison),
        (rt, [body("rt-one")], {}, "rt-one", poison),
        (rt, [body("rt-four"), "{}", "{}", "{}"], {}, "rt-four", poison),
        (s2, [], {}, None, poison),
        (s2, [body("s2-one")], {}, "s2-one", poison),
        (s2, [body("s2-four"), "{}", "{}", "{}"], {}, "s2-four", poison),
    ]


@pytest.mark.timeout(120)
def test_wrong_arity_tasks_become_error_entries_and_the_fleet_keeps_working(
    builtin: FleetUnderTest, app: Celery
) -> None:
    dag = fresh_dag("arity")
    calls = _calls(dag)
    unroutable = builtin.settings.keys.unroutable
    dead_key = builtin.settings.keys.dead_letter
    unroutable_before = builtin.db.xlen(unroutable)
    dead_before = builtin.db.xlen(dead_key)
    started = time.monotonic()
    for _ in range(2):  # each bad call twice: a resent call adds no second entry
        for task, args, kwargs, _, _ in calls:
            app.send_task(task.value, args=args, kwargs=kwargs)
    good = sample("good_python", dag_id=dag, node_id="still-works")
    app.send_task(TaskName.STAGE1.value, args=[json.dumps(good)])

    routable = [c for c in calls if c[3] is not None]
    n_unroutable = len(calls) - len(routable)
    n_poison = sum(1 for c in calls if c[4] is ErrorCode.POISON)

    expected_nodes = {c[3] for c in routable} | {"still-works"}

    def done() -> bool:
        counted = count_stream(builtin.db, builtin.settings, dag)
        return (
            expected_nodes <= {key.split(":")[1] for key in counted.per_key}
            and builtin.db.xlen(unroutable) - unroutable_before >= n_unroutable
            and builtin.db.xlen(dead_key) - dead_before >= n_poison
        )

    finished = wait_until(done, timeout_s=60)
    took_s = time.monotonic() - started
    wait_quiet(builtin.db, builtin.settings)  # the resent calls, had they added anything
    counted = count_stream(builtin.db, builtin.settings, dag)
    unroutable_entries = [
        cast(ReviewError, e.payload) for e in read_all(builtin.db, unroutable)[unroutable_before:]
    ]
    dead_entries = cast(list[tuple[bytes, dict[bytes, bytes]]], builtin.db.xrange(dead_key))
    dead = [entry_fields(fields) for _, fields in dead_entries][dead_before:]
    alive = {q.value: builtin.fleet.workers[q].poll() is None for q in Queue}
    record(
        "bad_arity_queue",
        {
            "bad_calls": len(calls),
            "sent_each": 2,
            "routable_entries": len(counted.errors),
            "unroutable_entries": len(unroutable_entries),
            "poison_dead_lettered": len(dead),
            "duplicated": len(counted.duplicated()),
            "workers_alive": sum(alive.values()),
            "seconds": round(took_s, 1),
        },
    )
    assert finished, (counted.per_key, unroutable_entries, dead)
    assert all(alive.values()), alive
    by_node = {e.node_id: e for e in counted.errors.values()}
    for task, args, _kwargs, node, code in routable:
        error = by_node.get(node)
        assert error is not None, f"{task.value}{args!r:.40} left no entry"
        assert error.code is code, (node, error)
        assert f"the {QUEUE_OF[task].value} task takes" in error.message
        assert f"got {len(args)} argument(s)" in error.message
        if code is ErrorCode.POISON:
            assert error.tries == 1  # dead-lettered at once: no retry mends arguments
        else:
            assert error.field == "(arguments)"
    assert counted.duplicated() == {}
    assert sorted(e.code.value for e in unroutable_entries) == sorted(
        c[4].value for c in calls if c[3] is None
    )
    assert any("keywords ['raw']" in e.message for e in unroutable_entries)
    assert len(dead) == n_poison  # each poison call dead-lettered once, resends included
    assert f"{dag}:still-works:1" in counted.results
