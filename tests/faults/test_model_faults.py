"""429/529/500/timeouts from the model API: every review ends, within the retry budget."""

from __future__ import annotations

import random
import time
from collections import Counter

import pytest

from schemas.quality import ScoreStatus
from schemas.result import CeilingStatus
from tests.faults.support import (
    FaultServer,
    FleetUnderTest,
    count_stream,
    fresh_dag,
    mixed,
    record,
    wait_quiet,
)
from tests.infrastructure import wait_until
from workers.testing.messages_api.server import Reply

pytestmark = [pytest.mark.integration, pytest.mark.slow]

REVIEWS = 45
SEED = 7


def _fault_script(rng: random.Random, count: int) -> tuple[list[Reply], Counter[str]]:
    kinds = ["429", "529", "500", "timeout", "ok"]
    weights = [0.2, 0.2, 0.2, 0.1, 0.3]
    replies: list[Reply] = []
    tally: Counter[str] = Counter()
    for kind in rng.choices(kinds, weights, k=count):
        tally[kind] += 1
        if kind == "429":
            replies.append(Reply.rate_limited(retry_after_s=1))
        elif kind == "529":
            replies.append(Reply.overloaded())
        elif kind == "500":
            replies.append(Reply.server_error())
        elif kind == "timeout":
            replies.append(Reply.hang(3.0))
        else:
            replies.append(Reply.ok())
    return replies, tally


@pytest.mark.timeout(150)
def test_model_api_faults_end_every_review_within_the_retry_budget(
    model: FleetUnderTest, model_server: FaultServer
) -> None:
    rng = random.Random(SEED)
    dag = fresh_dag("mf")
    nodes = [f"m{i:03d}" for i in range(REVIEWS)]
    requests = mixed(dag, nodes)
    # Floor failures never reach a model; the others make one Wall call, escalations
    # one Ceiling call more: the script covers about twice the logical calls.
    script, tally = _fault_script(rng, 2 * REVIEWS)
    model_server.reset()
    model_server.script(*script)
    started = time.monotonic()
    keys = model.client.submit_many(requests)
    finished = wait_until(
        lambda: not count_stream(model.db, model.settings, dag).lost(keys), timeout_s=100
    )
    took_s = time.monotonic() - started
    wait_quiet(model.db, model.settings)  # a second entry would land before this
    counted = count_stream(model.db, model.settings, dag)
    calls = model_server.calls_per_marker(nodes)
    statuses = Counter(e.status for e in model_server.requests)

    attempts = model.settings.judge_max_attempts
    over_budget: list[str] = []
    wall_indeterminate = ceiling_indeterminate = 0
    for node, key in zip(nodes, keys, strict=True):
        result = counted.results.get(key)
        if result is None:
            continue
        judged_stages = (1 if result.stage1.floor.passed else 0) + (
            1 if result.stage2 is not None else 0
        )
        if calls[node] > judged_stages * attempts:
            over_budget.append(f"{node}: {calls[node]} calls for {judged_stages} stage(s)")
        if result.quality.substance.status is ScoreStatus.INDETERMINATE or any(
            "judge" in i.message and "fail" in i.message for i in result.stage1.wall.issues
        ):
            wall_indeterminate += 1
        if result.stage2 is not None and result.stage2.status is CeilingStatus.INDETERMINATE:
            ceiling_indeterminate += 1
    record(
        "model_faults",
        {
            "reviews": len(keys),
            "scripted": dict(tally),
            "http_statuses": {str(k): v for k, v in sorted(statuses.items())},
            "http_calls": sum(calls.values()),
            "max_calls_per_review": max(calls.values()),
            "budget_per_stage": attempts,
            "over_budget": len(over_budget),
            "results": len(counted.results),
            "errors": len(counted.errors),
            "lost": len(counted.lost(keys)),
            "duplicated": len(counted.duplicated()),
            "wall_indeterminate": wall_indeterminate,
            "ceiling_indeterminate": ceiling_indeterminate,
            "seconds": round(took_s, 1),
        },
    )
    model_server.reset()
    assert finished, counted.lost(keys)[:5]
    assert counted.duplicated() == {}
    assert len(counted.results) + len(counted.errors) == len(keys)
    assert over_budget == [], over_budget[:5]
    # A provider failure is never a quality failure: no judged score of 0 from a fault.
    for result in counted.results.values():
        if result.stage2 is not None and result.stage2.status is CeilingStatus.INDETERMINATE:
            assert result.quality.correctness.status is ScoreStatus.INDETERMINATE
