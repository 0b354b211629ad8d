"""A review that crashes its judge every time ends as a poison entry; the rest keep flowing."""

from __future__ import annotations

import json
import time
from typing import cast

import pytest
import redis

from schemas.result import ErrorCode
from tests.faults.support import (
    MIX,
    POISON_MARKER,
    FaultServer,
    count_stream,
    fresh_dag,
    marked,
    record,
    wait_until,
)
from workers.client import ReviewClient
from workers.fleet import LocalFleet
from workers.settings import Settings
from workers.stream import entry_fields, read_all

pytestmark = [pytest.mark.integration, pytest.mark.slow]

HEALTHY = 24


@pytest.mark.timeout(120)
def test_a_review_that_crashes_the_judge_is_dead_lettered_after_max_tries(
    model_fleet: LocalFleet,
    model_client: ReviewClient,
    model_server: FaultServer,
    model_db: redis.Redis,
    model_settings: Settings,
) -> None:
    dag = fresh_dag("poison")
    poison = marked("final_deliverable", dag, "poisoned")
    poison["output"] = {
        **poison["output"],
        "content": poison["output"]["content"] + f"\n{POISON_MARKER}\n",
    }
    healthy_nodes = [f"h{i:03d}" for i in range(HEALTHY)]
    healthy = [marked(MIX[i % len(MIX)], dag, n) for i, n in enumerate(healthy_nodes)]
    dead_before = model_db.xlen(f"{model_settings.key_prefix}:deadletter")
    started = time.monotonic()
    [poison_key] = model_client.submit_many([poison])
    # Healthy reviews keep arriving while the poisoned one is retried.
    healthy_keys = model_client.submit_many(healthy[: HEALTHY // 2])
    time.sleep(1.0)
    healthy_keys += model_client.submit_many(healthy[HEALTHY // 2 :])

    def healthy_done() -> bool:
        return not count_stream(model_db, model_settings, dag).lost(healthy_keys)

    assert wait_until(healthy_done, timeout_s=45)
    healthy_s = time.monotonic() - started
    assert wait_until(
        lambda: count_stream(model_db, model_settings, dag).per_key[poison_key] > 0, 60
    )
    poison_s = time.monotonic() - started
    wait_until(lambda: False, timeout_s=2)
    counted = count_stream(model_db, model_settings, dag)
    error = counted.errors.get(poison_key)
    dead_entries = cast(
        list[tuple[bytes, dict[bytes, bytes]]],
        model_db.xrange(f"{model_settings.key_prefix}:deadletter"),
    )
    dead = [entry_fields(fields) for _, fields in dead_entries][dead_before:]
    poison_calls = model_server.calls_per_marker(["poisoned"])["poisoned"]
    # Entry ids are Redis server milliseconds: when each healthy result landed.
    landed_ms = sorted(
        int(e.entry_id.split("-")[0])
        for e in read_all(model_db, model_settings.stream_key(dag))
        if e.fields["review_key"] != poison_key
    )
    record(
        "poison",
        {
            "healthy_submitted": len(healthy_keys),
            "healthy_results": sum(1 for k in healthy_keys if k in counted.results),
            "healthy_done_s": round(healthy_s, 1),
            "healthy_landing_span_s": round((landed_ms[-1] - landed_ms[0]) / 1000, 1),
            "poison_code": error.code.value if error else None,
            "poison_tries": error.tries if error else None,
            "poison_entry_s": round(poison_s, 1),
            "poison_model_calls": poison_calls,
            "dead_lettered": len(dead),
            "duplicated": len(counted.duplicated()),
        },
    )
    assert error is not None and error.code is ErrorCode.POISON
    assert error.tries == model_settings.max_task_tries
    assert "JSONDecodeError" in error.message
    assert counted.per_key[poison_key] == 1
    assert [d["review_key"] for d in dead] == [poison_key]
    assert json.loads(dead[0]["raw"])["node_id"] == "poisoned"
    assert poison_calls == model_settings.max_task_tries  # one model call a try, no loop
    assert all(k in counted.results for k in healthy_keys)
    assert counted.duplicated() == {}
