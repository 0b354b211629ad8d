"""A try a Redis restart interrupted, replayed, is the same try: it never counts twice.

Three Redis restarts used to dead-letter the reviews in flight at each one: every hand-back
came back ``redelivered`` and counted one more try (``workers/fleet/recovery.py``).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import pytest
import redis
from celery.app.task import Context

from schemas.result import ErrorCode, ReviewError, ReviewResult
from tests.infrastructure import leased_database
from tests.integration.support import sample
from tests.verdicts import paid_verdict
from workers.fleet.deps import Deps, build_deps
from workers.fleet.guard import Delivery, Job, guarded
from workers.fleet.handlers import handle_router, handle_stage1, handle_stage2
from workers.fleet.judge_claim import stage2_claim
from workers.fleet.next_hop import CLAIM_WAIT, Hop
from workers.fleet.queues import Queue, TaskName
from workers.fleet.replay import REPLAY_HEADER, ReplayOf
from workers.fleet.tasks import delivery_of
from workers.fleet.tries import TryCount
from workers.results.stream import read_all
from workers.settings import Settings
from workers.testing.scripted_judge import ScriptedJudge

pytestmark = pytest.mark.integration

LIMIT = 3


@pytest.fixture(scope="module")
def replays_url(redis_url: str) -> str:
    return leased_database(redis_url.rsplit("/", 1)[0] + "/12")


@pytest.fixture
def judge() -> ScriptedJudge:
    return ScriptedJudge()


@pytest.fixture
def deps(replays_url: str, judge: ScriptedJudge) -> Iterator[Deps]:
    settings = Settings(
        redis_url=replays_url, key_prefix=f"rp-{uuid.uuid4().hex[:8]}", max_task_tries=LIMIT
    )
    built = replace(build_deps(settings, judge=judge), wall_judge=None)
    yield built
    built.close()


def _at_router(deps: Deps, dag: str) -> Hop:
    hop = handle_stage1(json.dumps(sample("final_deliverable.json", dag_id=dag)), deps)
    assert isinstance(hop, Hop) and hop.task is TaskName.ROUTER
    return hop


def _entries(deps: Deps, dag: str) -> list[ReviewResult | ReviewError]:
    return [e.payload for e in read_all(deps.redis, deps.settings.keys.results(dag))]


@pytest.mark.parametrize(
    ("delivery", "dead_lettered"),
    [
        (Delivery.REPLAY, False),
        (Delivery.FIRST_REPLAY, False),
        (Delivery.UNKNOWN, True),
        (Delivery.REPLAY_COUNTED, True),
    ],
)
def test_a_replayed_stage2_try_is_not_counted_again(
    deps: Deps, judge: ScriptedJudge, delivery: Delivery, dead_lettered: bool
) -> None:
    dag = f"s2-{delivery.value}"
    identity, request, report = _at_router(deps, dag).args
    hop = handle_router(identity, request, report, deps)
    assert isinstance(hop, Hop) and hop.task is TaskName.STAGE2
    routed = hop.args[2]
    counter = deps.keys.tries("stage2", f"{dag}:release-notes:1")
    deps.redis.set(counter, LIMIT)  # the interrupted try was the last one allowed
    judge.push(paid_verdict(0.9, model="scripted-sonnet", tokens=(1000, 200), cost_usd=0.01))

    assert handle_stage2(identity, request, routed, deps, delivery=delivery) is None

    [entry] = _entries(deps, dag)
    if dead_lettered:  # any other delivery is one try more
        assert isinstance(entry, ReviewError) and entry.code is ErrorCode.POISON
    else:
        assert isinstance(entry, ReviewResult) and entry.stage2 is not None
        assert int(deps.redis.get(counter) or 0) == LIMIT


@pytest.mark.parametrize(
    ("delivery", "dead_lettered"),
    [(Delivery.REPLAY, False), (Delivery.AGAIN, True), (Delivery.REPLAY_COUNTED, True)],
)
def test_a_replayed_router_try_is_not_counted_again(
    deps: Deps, delivery: Delivery, dead_lettered: bool
) -> None:
    dag = f"r-{delivery.value}"
    identity, request, report = _at_router(deps, dag).args
    counter = deps.keys.tries("router", f"{dag}:release-notes:1")
    # The router counts lazily: the counter holds the redeliveries, the first goes uncounted.
    deps.redis.set(counter, LIMIT - 1)

    outcome = handle_router(identity, request, report, deps, delivery=delivery)

    if dead_lettered:
        assert outcome is None
        [entry] = _entries(deps, dag)
        assert isinstance(entry, ReviewError) and entry.code is ErrorCode.POISON
    else:
        assert isinstance(outcome, Hop) and outcome.task is TaskName.STAGE2
        assert _entries(deps, dag) == []
        assert int(deps.redis.get(counter) or 0) == LIMIT - 1


def _at_stage2(deps: Deps, dag: str) -> tuple[str, str, str]:
    identity, request, report = _at_router(deps, dag).args
    hop = handle_router(identity, request, report, deps)
    assert isinstance(hop, Hop) and hop.task is TaskName.STAGE2
    return identity, request, hop.args[2]


@pytest.mark.parametrize("stage", [Queue.STAGE1, Queue.ROUTER, Queue.STAGE2])
def test_a_replay_past_the_replay_limit_is_dead_lettered_saying_so(
    deps: Deps, stage: Queue
) -> None:
    """A try that kills its own connection each time: its hand-backs count, and end."""
    dag = f"rl-{stage.value}"
    identity, request, _ = _at_stage2(deps, dag)
    key = f"{dag}:release-notes:1"
    job = Job.of_hop(stage, identity, request, delivery=Delivery.REPLAY_COUNTED)
    if stage is Queue.STAGE2:  # as its handler builds it: every delivery counted
        job = replace(job, claim=stage2_claim(deps, key))
    # Every try allowed was counted (a stage with no claim leaves its first uncounted).
    deps.redis.set(deps.keys.tries(stage.value, key), LIMIT if job.claim else LIMIT - 1)

    def work(count: TryCount) -> None:
        raise AssertionError("a try past the limit ran")

    assert guarded(job, deps, work) is None

    [entry] = _entries(deps, dag)
    assert isinstance(entry, ReviewError) and entry.code is ErrorCode.POISON
    assert entry.tries == LIMIT
    replays = deps.settings.max_task_replays
    assert f"did not finish in {LIMIT} tries" in entry.message
    assert f"handed back more than {replays} times" in entry.message


@pytest.mark.parametrize(
    ("fault", "dead_lettered"),
    [(redis.ConnectionError("Redis went away"), False), (ValueError("a bug"), True)],
)
def test_an_outage_met_inside_a_try_is_no_failed_try(
    deps: Deps, fault: Exception, dead_lettered: bool
) -> None:
    dag = f"of-{type(fault).__name__}"
    identity, request, _ = _at_stage2(deps, dag)
    job = Job.of_hop(Queue.STAGE2, identity, request)
    counter = deps.keys.tries("stage2", f"{dag}:release-notes:1")
    deps.redis.set(counter, LIMIT - 1)  # this delivery is the last try allowed

    def work(count: TryCount) -> None:
        raise fault

    if dead_lettered:  # the try's own failure, at the limit
        assert guarded(job, deps, work) is None
        [entry] = _entries(deps, dag)
        assert isinstance(entry, ReviewError) and entry.code is ErrorCode.POISON
    else:  # the task hands the message back as a replay of this try (workers/fleet/outage.py)
        with pytest.raises(redis.ConnectionError):
            guarded(job, deps, work)
        assert _entries(deps, dag) == []
    assert int(deps.redis.get(counter) or 0) == LIMIT


@pytest.mark.parametrize(
    ("delivery", "left"), [(Delivery.UNKNOWN, LIMIT - 1), (Delivery.REPLAY, LIMIT - 2)]
)
def test_a_wait_for_the_claim_is_no_try_even_for_a_replay(
    deps: Deps, delivery: Delivery, left: int
) -> None:
    dag = f"cw-{delivery.value}"
    identity, request, routed = _at_stage2(deps, dag)
    key = f"{dag}:release-notes:1"
    counter = deps.keys.tries("stage2", key)
    deps.redis.set(counter, LIMIT - 1)
    # The interrupted try still runs (its thread outlived the connection) and holds the claim.
    deps.redis.set(deps.keys.stage2_claim(key), "1", ex=60)

    assert handle_stage2(identity, request, routed, deps, delivery=delivery) == CLAIM_WAIT

    # The wait's retry counts one try: the same as the try this delivery was, or replayed.
    assert int(deps.redis.get(counter) or 0) == left
    assert _entries(deps, dag) == []


def _task(**request: Any) -> Any:
    fields = {"delivery_info": {}, "retries": 0, **request}
    return SimpleNamespace(request=Context(fields))


@pytest.mark.parametrize(
    ("request_fields", "expected"),
    [
        ({}, Delivery.FIRST),
        ({"delivery_info": {"redelivered": True}}, Delivery.AGAIN),
        ({"retries": 1}, Delivery.AGAIN),
        # A hand-back marks the message redelivered (kombu) and a replay (ours).
        ({"redelivered": True, REPLAY_HEADER: f"{ReplayOf.FIRST}:0"}, Delivery.FIRST_REPLAY),
        ({"redelivered": True, REPLAY_HEADER: f"{ReplayOf.AGAIN}:0"}, Delivery.REPLAY),
        ({"retries": 2, REPLAY_HEADER: f"{ReplayOf.FIRST}:2"}, Delivery.REPLAY),
        # A Celery retry copies its task's headers: a mark of another message is no mark.
        ({"retries": 1, REPLAY_HEADER: f"{ReplayOf.FIRST}:0"}, Delivery.AGAIN),
        ({REPLAY_HEADER: "garbage", "redelivered": True}, Delivery.AGAIN),
    ],
)
def test_a_replay_is_told_from_its_headers(
    request_fields: dict[str, Any], expected: Delivery
) -> None:
    max_replays = Settings().max_task_replays
    assert delivery_of(_task(**request_fields), max_replays=max_replays) is expected
