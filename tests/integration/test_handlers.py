"""Handlers against real Redis with a scripted judge: no broker, no emulation."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, cast

import pytest
import redis

from schemas.decisions import Decision
from schemas.hops import ReviewIdentity, RoutedReview, Stage1Report
from schemas.judging import JudgeVerdict
from schemas.result import CeilingStatus, ErrorCode, ReviewError, ReviewResult
from tests.infrastructure import drop_prefix, leased_database
from tests.integration.support import sample
from tests.verdicts import paid_verdict
from workers.errors import JudgeRetryableError
from workers.fleet.deps import Deps, build_deps
from workers.fleet.handlers import handle_router, handle_stage1, handle_stage2
from workers.fleet.next_hop import Hop, RetryLater
from workers.fleet.queues import TaskName
from workers.results.stream import read_all
from workers.settings import Settings
from workers.testing.scripted_judge import ScriptedJudge

pytestmark = pytest.mark.integration


def verdict() -> JudgeVerdict:
    return scored(0.9)


def scored(score: float) -> JudgeVerdict:
    return paid_verdict(score, model="scripted-sonnet", tokens=(1000, 200), cost_usd=0.01)


@pytest.fixture(scope="module")
def handlers_url(redis_url: str) -> str:
    """A database of the handlers' own (db 12 preferred), emptied after each test."""
    return leased_database(redis_url.rsplit("/", 1)[0] + "/12")


@pytest.fixture
def settings(handlers_url: str) -> Settings:
    return Settings(
        redis_url=handlers_url, key_prefix=f"h-{uuid.uuid4().hex[:8]}", max_task_tries=3
    )


@pytest.fixture
def judge() -> ScriptedJudge:
    return ScriptedJudge()


def ceiling_only(settings: Settings, judge: ScriptedJudge) -> Deps:
    """Deps whose scripted judge scores the Ceiling; the Wall stays the heuristics."""
    return replace(build_deps(settings, judge=judge), wall_judge=None)


@contextmanager
def scratch_deps(redis_url: str, label: str) -> Iterator[Deps]:
    """``ceiling_only`` deps under a fresh key prefix, reading the stored model each time."""
    prefix = f"{label}-{uuid.uuid4().hex[:8]}"
    settings = Settings(redis_url=redis_url, key_prefix=prefix, calibration_refresh_s=0.0)
    built = ceiling_only(settings, ScriptedJudge())
    try:
        yield built
    finally:
        drop_prefix(built.redis, prefix)
        built.close()


@pytest.fixture
def deps(settings: Settings, judge: ScriptedJudge) -> Iterator[Deps]:
    built = ceiling_only(settings, judge)
    yield built
    built.close()


def through_stage1(deps: Deps, body: dict[str, Any]) -> Hop:
    hop = handle_stage1(json.dumps(body), deps)
    assert isinstance(hop, Hop) and hop.task is TaskName.ROUTER
    return hop


def through_router(deps: Deps, body: dict[str, Any]) -> Hop:
    hop = run_router(through_stage1(deps, body), deps)
    assert isinstance(hop, Hop) and hop.task is TaskName.STAGE2
    return hop


def run_router(hop: Hop, deps: Deps) -> object:
    identity_json, request_json, report_json = hop.args
    return handle_router(identity_json, request_json, report_json, deps)


def run_stage2(hop: Hop, deps: Deps) -> object:
    identity_json, request_json, routed_json = hop.args
    return handle_stage2(identity_json, request_json, routed_json, deps)


def results(deps: Deps, dag: str) -> list[ReviewResult | ReviewError]:
    return [e.payload for e in read_all(deps.redis, deps.settings.keys.results(dag))]


def test_a_redelivered_stage2_task_publishes_once_and_never_pays_the_judge_twice(
    deps: Deps, judge: ScriptedJudge
) -> None:
    judge.push(verdict())
    hop = through_router(deps, sample("final_deliverable.json", dag_id="d1"))
    assert run_stage2(hop, deps) is None
    assert run_stage2(hop, deps) is None  # redelivered after it published
    assert len(results(deps, "d1")) == 1

    # Redelivered after judging but before the publish landed: the cached judgement is used.
    deps.redis.delete(deps.keys.published("d1:release-notes:1"))
    deps.redis.delete(deps.settings.keys.results("d1"))
    assert run_stage2(hop, deps) is None

    assert len(judge.tasks) == 1
    [entry] = results(deps, "d1")
    assert isinstance(entry, ReviewResult) and entry.stage2 is not None
    assert entry.quality.correctness.value == pytest.approx(0.9)
    assert deps.ledger.total("d1") == pytest.approx(0.01)


def test_a_spent_dag_budget_suppresses_stage2_with_the_reason_recorded(
    settings: Settings, judge: ScriptedJudge
) -> None:
    budgeted = ceiling_only(settings.model_copy(update={"dag_budget_usd": 0.05}), judge)
    try:
        budgeted.ledger.add("d2", 0.05)
        hop = through_stage1(budgeted, sample("final_deliverable.json", dag_id="d2"))
        assert run_router(hop, budgeted) is None
        [result] = results(budgeted, "d2")
    finally:
        budgeted.close()
    assert isinstance(result, ReviewResult)
    assert result.escalation.escalate is False
    assert result.escalation.suppressed_by == "budget_exhausted"
    assert result.stage2 is None and judge.tasks == []


def test_a_judge_that_crashes_every_time_ends_as_a_dead_lettered_poison_entry(
    deps: Deps, judge: ScriptedJudge
) -> None:
    class Crash(ScriptedJudge):
        def evaluate(self, task: Any) -> JudgeVerdict:
            raise RuntimeError("segfault in the tokenizer")

    crashing = replace(deps, judge=Crash())
    hop = through_router(crashing, sample("final_deliverable.json", dag_id="d3"))
    outcomes = [run_stage2(hop, crashing) for _ in range(3)]

    assert [type(o) for o in outcomes] == [RetryLater, RetryLater, type(None)]
    [error] = results(deps, "d3")
    assert isinstance(error, ReviewError)
    assert error.code is ErrorCode.POISON and error.tries == 3
    assert "segfault in the tokenizer" in error.message
    assert deps.redis.xlen(deps.keys.dead_letter) == 1
    # A redelivery after giving up adds nothing.
    assert run_stage2(hop, crashing) is None
    assert len(results(deps, "d3")) == 1


def test_a_judge_fault_is_an_indeterminate_ceiling_not_a_zero(
    deps: Deps, judge: ScriptedJudge
) -> None:
    judge.push(JudgeRetryableError("529 overloaded after 3 attempts"))
    hop = through_router(deps, sample("final_deliverable.json", dag_id="d4"))
    run_stage2(hop, deps)

    [result] = results(deps, "d4")
    assert isinstance(result, ReviewResult) and result.stage2 is not None
    assert result.stage2.status is CeilingStatus.INDETERMINATE
    assert result.quality.correctness.value is None
    assert result.decision.value == "escalate_human"


def test_each_hop_carries_the_identity_the_request_and_the_previous_stage(deps: Deps) -> None:
    hop = through_router(deps, sample("final_deliverable.json", dag_id="d5"))
    identity_json, request_json, routed_json = hop.args
    routed = RoutedReview.model_validate_json(routed_json)
    assert isinstance(routed.report, Stage1Report)
    assert ReviewIdentity.model_validate_json(identity_json).key == "d5:release-notes:1"
    assert json.loads(request_json)["node_id"] == "release-notes"


def test_stage1_skips_a_review_already_published(deps: Deps, judge: ScriptedJudge) -> None:
    body = sample("good_python.json", dag_id="d6")
    run_router(through_stage1(deps, body), deps)
    assert handle_stage1(json.dumps(body), deps) is None
    assert len(results(deps, "d6")) == 1


class Spy:
    """Passes every call on to ``inner``, noting ``name.method`` first."""

    def __init__(self, inner: object, name: str, calls: list[str]) -> None:
        self._inner, self._name, self._calls = inner, name, calls

    def __getattr__(self, attr: str) -> Any:
        found = getattr(self._inner, attr)
        if not callable(found):
            return found

        def noted(*args: Any, **kwargs: Any) -> Any:
            self._calls.append(f"{self._name}.{attr}")
            return found(*args, **kwargs)

        return noted


def test_one_escalated_review_asks_its_memory_the_stream_and_the_gate_in_turn(
    deps: Deps, judge: ScriptedJudge
) -> None:
    body = sample("final_deliverable.json", dag_id="p1", max_iterations=2)
    judge.push(scored(0.5))
    assert run_stage2(through_router(deps, body), deps) is None  # attempt 1: iterate
    judge.push(scored(0.6))
    hop = through_router(deps, {**body, "attempt": 2})  # no history: the fleet's is read
    calls: list[str] = []
    marks = cast(Any, Spy(deps.records.marks, "marks", calls))
    spied = replace(
        deps,
        records=cast(Any, Spy(replace(deps.records, marks=marks), "records", calls)),
        stream=cast(Any, Spy(deps.stream, "stream", calls)),
        gate=cast(Any, Spy(deps.gate, "gate", calls)),
    )
    assert run_stage2(hop, spied) is None

    # The memory is read before the verdict; publication enters it once, and the stream
    # write, the gate's queue and the mark happen inside that one call, in that order.
    assert calls == [
        "records.with_history",
        "records.publish",
        "stream.publish_result",
        "gate.enqueue",
        "marks.done",
    ]
    second = results(deps, "p1")[1]
    assert isinstance(second, ReviewResult) and second.decision is Decision.ESCALATE_HUMAN
    assert second.convergence.scores == (0.5, 0.6)  # attempt 1 from the fleet's record
    [line] = deps.gate.queue.pending(dag_id="p1")
    assert line.summary.review_key == "p1:release-notes:2"
    assert deps.records.marks.is_done("p1:release-notes:2")


def at_stage2(deps: Deps, judge: ScriptedJudge, dag: str) -> tuple[Hop, str, str]:
    """An escalated review ready for Stage 2: its hop, claim key and Stage 2 try counter."""
    judge.push(verdict())
    hop = through_router(deps, sample("final_deliverable.json", dag_id=dag))
    review_key = f"{dag}:release-notes:1"
    claim_key = deps.keys.stage2_claim(review_key)
    return hop, claim_key, deps.keys.tries("stage2", review_key)


def test_waiting_for_another_workers_stage2_claim_is_not_a_try(
    deps: Deps, judge: ScriptedJudge
) -> None:
    """A long legitimate Stage 2 plus duplicate deliveries must not dead-letter the review."""
    hop, claim_key, counter = at_stage2(deps, judge, "d7")
    # Another worker is judging this review (its claim expires at the Stage 2 hard limit).
    assert deps.redis.set(claim_key, "1", nx=True, ex=deps.settings.stage2_hard_limit_s)
    waits = [run_stage2(hop, deps) for _ in range(deps.settings.max_task_tries * 3)]

    assert all(isinstance(w, RetryLater) and not w.counted for w in waits), waits
    assert all(isinstance(w, RetryLater) and w.delay_s <= 5.0 for w in waits)
    assert int(deps.redis.get(counter) or 0) == 0  # every wait was taken back
    assert results(deps, "d7") == []  # no poison entry
    assert deps.redis.xlen(deps.keys.dead_letter) == 0
    assert judge.tasks == []  # nobody paid for a second judgement

    deps.redis.delete(claim_key)  # the holder ended (or its claim expired)
    assert run_stage2(hop, deps) is None
    [entry] = results(deps, "d7")
    assert isinstance(entry, ReviewResult) and entry.stage2 is not None
    assert len(judge.tasks) == 1
    assert int(deps.redis.get(counter) or 0) == 1


def test_a_delivery_past_the_try_limit_waits_while_a_live_worker_holds_the_claim(
    deps: Deps, judge: ScriptedJudge
) -> None:
    """Its poison entry would otherwise take the stream slot of that worker's result."""
    hop, claim_key, counter = at_stage2(deps, judge, "d9")
    limit = deps.settings.max_task_tries
    deps.redis.set(counter, limit)  # every try used up (workers died) ...
    deps.redis.set(claim_key, "1", ex=deps.settings.stage2_hard_limit_s)  # ... one runs now

    wait = run_stage2(hop, deps)

    assert isinstance(wait, RetryLater) and not wait.counted
    assert int(deps.redis.get(counter) or 0) == limit
    assert results(deps, "d9") == []
    assert deps.redis.xlen(deps.keys.dead_letter) == 0

    deps.redis.delete(claim_key)  # that worker died too: its claim expired
    assert run_stage2(hop, deps) is None
    [entry] = results(deps, "d9")
    assert isinstance(entry, ReviewError) and entry.code is ErrorCode.POISON
    assert deps.redis.xlen(deps.keys.dead_letter) == 1
    assert judge.tasks == []


def test_a_stage2_fault_still_counts_as_a_try(deps: Deps) -> None:
    class Crash(ScriptedJudge):
        def evaluate(self, task: Any) -> JudgeVerdict:
            raise RuntimeError("the judge process crashed")

    crashing = replace(deps, judge=Crash())
    hop = through_router(crashing, sample("final_deliverable.json", dag_id="d8"))
    first = run_stage2(hop, crashing)
    assert isinstance(first, RetryLater) and first.counted
    assert int(deps.redis.get(deps.keys.tries("stage2", "d8:release-notes:1")) or 0) == 1


@pytest.fixture(autouse=True)
def _clean(handlers_url: str) -> Iterator[None]:
    yield
    client = redis.Redis.from_url(handlers_url)
    client.flushdb()
    client.close()
