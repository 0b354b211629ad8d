"""The human gate against real Redis: queue once, claims, verdicts exactly once, memory.

The handlers run in this process with the built-in judge (as test_handlers does): what
is under test is the Redis side, the scripts and the keys, not the worker processes.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from schemas.decisions import Decision, Trend
from schemas.human import (
    HumanDecision,
    HumanReason,
    HumanVerdict,
    OutcomeSource,
    VerdictAction,
    VerdictChannel,
    VerdictInput,
)
from schemas.quality import Dimension
from schemas.result import ReviewResult
from tests.integration.support import sample
from workers.fleet.deps import Deps, build_deps
from workers.fleet.handlers import handle_router, handle_stage1, handle_stage2
from workers.fleet.next_hop import Hop
from workers.human import ClaimStatus, RecordStatus
from workers.results.stream import read_all_kinds
from workers.settings import Settings

pytestmark = pytest.mark.integration


@pytest.fixture
def deps(redis_url: str) -> Iterator[Deps]:
    settings = Settings(
        redis_url=redis_url,
        key_prefix=f"hg-{uuid.uuid4().hex[:8]}",
        judge_backend="builtin",
        attempts_kept=3,
        outcomes_kept=5,
    )
    built = build_deps(settings)
    yield built
    built.close()


def review(deps: Deps, body: dict[str, Any]) -> Hop:
    """The three stages in this process, as the fleet runs them; the router's hop."""
    hop = handle_stage1(json.dumps(body), deps)
    assert isinstance(hop, Hop)
    outcome = route(hop, deps)
    if isinstance(outcome, Hop):
        identity, request, routed = outcome.args
        outcome = handle_stage2(identity, request, routed, deps)
    assert outcome is None
    return hop


def route(hop: Hop, deps: Deps) -> object:
    identity, request, report = hop.args
    return handle_router(identity, request, report, deps)


def escalated(deps: Deps, dag: str, attempt: int = 1) -> str:
    """Review the conflicting-signals sample, which goes to a person; its review key."""
    review(deps, sample("example3_conflicting_signals.json", dag_id=dag, attempt=attempt))
    return f"{dag}:sql-optimizer:{attempt}"


def kinds(deps: Deps, dag: str) -> list[str]:
    return [e.fields["kind"] for e in read_all_kinds(deps.redis, deps.keys.results(dag))]


def send_back(feedback: str = "add a LIMIT") -> VerdictInput:
    return VerdictInput(action=VerdictAction.SEND_BACK, feedback=feedback)


def test_an_escalated_result_enters_the_queue_once_with_what_a_reviewer_needs(deps: Deps) -> None:
    hop = review(deps, sample("example3_conflicting_signals.json", dag_id="q1"))
    key = "q1:sql-optimizer:1"
    # Redelivered: the router runs again and publishes nothing new, queues nothing new.
    assert route(hop, deps) is None
    review(deps, sample("good_python.json", dag_id="q1"))  # accepted: never queued

    [line] = deps.gate.queue.pending()
    assert line.summary.review_key == key and line.claimed_by is None
    assert line.summary.reasons == (HumanReason.DISAGREEMENT,)
    item = deps.gate.queue.item(key)
    assert item is not None
    assert item.request.task == "Optimise the running-total query over payments"
    assert item.request.output.kind == "sql"
    assert item.result.decision is Decision.ESCALATE_HUMAN
    assert item.result.confidence.human_review is True
    assert kinds(deps, "q1") == ["result", "result"]


class WorkerKilled(BaseException):
    """Stands for kill -9: the worker stops between two Redis calls, nothing unwinds."""


def test_a_worker_killed_after_publishing_leaves_the_redelivery_to_finish_the_bookkeeping(
    deps: Deps, monkeypatch: pytest.MonkeyPatch
) -> None:
    hop = handle_stage1(json.dumps(sample("example3_conflicting_signals.json", dag_id="k1")), deps)
    assert isinstance(hop, Hop)

    def killed(*_: Any, **__: Any) -> bool:
        raise WorkerKilled

    # Killed after the entry, the attempt record and the labels, before the queue item.
    with monkeypatch.context() as patch:
        patch.setattr(deps.gate.queue, "enqueue", killed)
        with pytest.raises(WorkerKilled):
            route(hop, deps)
    key = "k1:sql-optimizer:1"
    assert kinds(deps, "k1") == ["result"]
    assert deps.gate.queue.item(key) is None  # the person would never hear of it
    labels = list(deps.records.outcomes.export(skill="sql-optimizer"))
    assert len(labels) == 2  # the request's downstream and peer signals

    assert route(hop, deps) is None  # the redelivery
    assert route(hop, deps) is None  # and one more, after the bookkeeping is done
    assert kinds(deps, "k1") == ["result"]
    [line] = deps.gate.queue.pending(dag_id="k1")
    assert line.summary.review_key == key
    assert list(deps.records.outcomes.export(skill="sql-optimizer")) == labels  # none twice
    assert deps.records.attempts.get("k1", "sql-optimizer", 1) is not None


def test_the_queue_filters_by_dag_skill_and_reason_oldest_first(deps: Deps) -> None:
    first, second = escalated(deps, "f1"), escalated(deps, "f2")
    floor = sample("floor_failure_python.json", dag_id="f3", attempt=3, max_iterations=3)
    review(deps, floor)  # a Floor failure on the last attempt: out of iterations

    queue = deps.gate.queue
    assert [ln.summary.review_key for ln in queue.pending()][:2] == [first, second]
    assert [ln.summary.review_key for ln in queue.pending(dag_id="f2")] == [second]
    by_reason = queue.pending(reason=HumanReason.OUT_OF_ITERATIONS)
    assert [ln.summary.dag_id for ln in by_reason] == ["f3"]
    assert queue.pending(skill_id="sql-optimizer", dag_id="f3") == []


def test_a_claimed_item_shows_claimed_and_an_expired_claim_returns_to_the_queue(
    deps: Deps,
) -> None:
    key = escalated(deps, "c1")
    queue = deps.gate.queue
    assert queue.claim(key, "alice").status is ClaimStatus.MINE
    held = queue.claim(key, "bob")
    assert (held.status, held.holder) == (ClaimStatus.HELD, "alice")
    assert 0 < held.ttl_s <= deps.settings.human_claim_ttl_s
    assert queue.pending()[0].claimed_by == "alice"

    deps.redis.pexpire(deps.keys.human_claim(key), 1)  # alice walks away; Redis expires it
    assert wait_for(lambda: queue.pending()[0].claimed_by is None)
    assert queue.claim(key, "bob").status is ClaimStatus.MINE


def test_the_same_verdict_twice_yields_one_human_verdict_and_one_decision(deps: Deps) -> None:
    key = escalated(deps, "v1")
    desk = deps.gate.desk
    deps.redis.persist(deps.keys.results("v1"))  # the verdict alone must set the expiry
    first = desk.record(key, send_back(), reviewer="alice", channel=VerdictChannel.API)
    # The stream goes a retention window after its newest entry (not never).
    retention_ms = 1000 * deps.settings.stream_retention_s
    assert retention_ms - 60_000 < deps.redis.pttl(deps.keys.results("v1")) <= retention_ms
    again = desk.record(key, send_back(), reviewer="alice", channel=VerdictChannel.API)

    assert first.status is RecordStatus.RECORDED
    assert (again.status, again.other) == (RecordStatus.DECIDED, "alice")
    assert kinds(deps, "v1") == ["result", "human_verdict", "decision"]
    assert deps.gate.queue.pending() == []
    assert deps.gate.queue.claim(key, "bob").status is ClaimStatus.DECIDED


@pytest.mark.parametrize("round_", range(5))
def test_two_reviewers_racing_yield_exactly_one_verdict(deps: Deps, round_: int) -> None:
    key = escalated(deps, f"race{round_}")
    start = threading.Barrier(2)
    outcomes: dict[str, RecordStatus] = {}

    def submit(name: str, action: VerdictAction) -> None:
        start.wait()
        done = deps.gate.desk.record(
            key, VerdictInput(action=action), reviewer=name, channel=VerdictChannel.PAGE
        )
        outcomes[name] = done.status

    threads = [
        threading.Thread(target=submit, args=("alice", VerdictAction.ACCEPT)),
        threading.Thread(target=submit, args=("bob", VerdictAction.REJECT)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    assert sorted(outcomes.values()) == [RecordStatus.DECIDED, RecordStatus.RECORDED]
    entries = read_all_kinds(deps.redis, deps.keys.results(f"race{round_}"))
    verdicts = [e.payload for e in entries if isinstance(e.payload, HumanVerdict)]
    decisions = [e.payload for e in entries if isinstance(e.payload, HumanDecision)]
    assert len(verdicts) == len(decisions) == 1
    winner = next(name for name, status in outcomes.items() if status is RecordStatus.RECORDED)
    assert verdicts[0].reviewer == decisions[0].reviewer == winner


def test_a_reviewer_whose_claim_expired_cannot_overwrite_another_reviewers_verdict(
    deps: Deps,
) -> None:
    key = escalated(deps, "x1")
    queue, desk = deps.gate.queue, deps.gate.desk
    assert queue.claim(key, "alice").status is ClaimStatus.MINE
    deps.redis.pexpire(deps.keys.human_claim(key), 1)
    assert wait_for(lambda: queue.claim(key, "bob").status is ClaimStatus.MINE)

    # While bob holds it, alice's late form is refused...
    late = desk.record(
        key,
        VerdictInput(action=VerdictAction.ACCEPT),
        reviewer="alice",
        channel=VerdictChannel.PAGE,
    )
    assert (late.status, late.other) == (RecordStatus.HELD, "bob")
    # ...and once bob decided, it still is: his verdict stands alone.
    bobs = desk.record(key, send_back("too slow"), reviewer="bob", channel=VerdictChannel.PAGE)
    assert bobs.status is RecordStatus.RECORDED
    later = desk.record(
        key,
        VerdictInput(action=VerdictAction.ACCEPT),
        reviewer="alice",
        channel=VerdictChannel.PAGE,
    )
    assert (later.status, later.other) == (RecordStatus.DECIDED, "bob")
    verdicts = [
        e.payload
        for e in read_all_kinds(deps.redis, deps.keys.results("x1"))
        if isinstance(e.payload, HumanVerdict)
    ]
    assert [(v.reviewer, v.action) for v in verdicts] == [("bob", VerdictAction.SEND_BACK)]


def test_a_verdict_on_a_key_that_never_waited_is_refused(deps: Deps) -> None:
    review(deps, sample("good_python.json", dag_id="m1"))
    done = deps.gate.desk.record(
        "m1:good-python:1", send_back(), reviewer="alice", channel=VerdictChannel.API
    )
    assert done.status is RecordStatus.MISSING
    assert kinds(deps, "m1") == ["result"]


def test_the_decision_carries_the_human_signal_at_weight_0_50(deps: Deps) -> None:
    key = escalated(deps, "w1")
    given = VerdictInput(action=VerdictAction.ACCEPT, scores={Dimension.CORRECTNESS: 0.9})
    deps.gate.desk.record(key, given, reviewer="carol", channel=VerdictChannel.API)
    [_, verdict, decision] = [
        e.payload for e in read_all_kinds(deps.redis, deps.keys.results("w1"))
    ]
    assert isinstance(verdict, HumanVerdict) and isinstance(decision, HumanDecision)
    assert verdict.human_score == 0.9 and verdict.machine_decision is Decision.ESCALATE_HUMAN
    assert decision.decision is Decision.ACCEPT and decision.supersedes is Decision.ESCALATE_HUMAN
    assert decision.confidence.weights == {"peer": 0.15, "downstream": 0.45, "human": 0.5}
    # (0.15 * 0.85 + 0.45 * 0.35 + 0.50 * 0.9) / 1.10
    assert decision.confidence.score == pytest.approx(0.668182, abs=1e-6)
    assert decision.confidence.human_review is False
    assert decision.quality.correctness.value == 0.9
    assert "carol" in decision.quality.correctness.justification


def test_attempts_are_remembered_capped_and_feed_the_next_attempts_convergence(
    deps: Deps,
) -> None:
    body = sample("floor_failure_python.json", dag_id="a1", max_iterations=9)
    for attempt in (1, 2, 3, 4):
        review(deps, {**body, "attempt": attempt})
    records = deps.records.attempts.records("a1", body["node_id"])
    assert [r.attempt for r in records] == [2, 3, 4]  # attempts_kept=3
    assert deps.redis.ttl(deps.keys.attempts("a1", body["node_id"])) > 0
    results = [
        e.payload
        for e in read_all_kinds(deps.redis, deps.keys.results("a1"))
        if isinstance(e.payload, ReviewResult)
    ]
    assert [r.convergence.scores for r in results[:3]] == [(0.0,), (0.0, 0.0), (0.0, 0.0, 0.0)]
    assert results[2].convergence.trend is Trend.PLATEAU
    # Attempt 5: attempt 1 is forgotten, so no history is made up (a gap would misname
    # the attempt to revert to).
    review(deps, {**body, "attempt": 5})
    fifth = [e.payload for e in read_all_kinds(deps.redis, deps.keys.results("a1"))][-1]
    assert isinstance(fifth, ReviewResult) and fifth.convergence.scores == (0.0,)


def test_a_request_that_sends_its_own_history_wins(deps: Deps) -> None:
    body = sample("floor_failure_python.json", dag_id="h1")
    review(deps, body)
    review(deps, {**body, "attempt": 2, "history": [0.7]})
    last = [e.payload for e in read_all_kinds(deps.redis, deps.keys.results("h1"))][-1]
    assert isinstance(last, ReviewResult)
    assert last.convergence.scores == (0.7, 0.0)
    assert last.convergence.trend is Trend.DEGRADING and last.convergence.best_attempt == 1


def test_outcomes_are_kept_per_skill_and_per_evaluator_bounded(deps: Deps) -> None:
    key = escalated(deps, "o1")
    deps.gate.desk.record(key, send_back(), reviewer="dana", channel=VerdictChannel.API)
    assert deps.records.report_downstream("o1", "sql-optimizer", 1, 0.2, reporter="exec-engine")
    assert not deps.records.report_downstream("o1", "nobody", 1, 0.2, reporter="exec-engine")

    outcomes = deps.records.outcomes
    got = [(o.source, o.evaluator, o.label) for o in outcomes.export(skill="sql-optimizer")]
    assert got == [
        (OutcomeSource.DOWNSTREAM, "downstream:request", 0.35),
        (OutcomeSource.PEER, "peer:sql-optimizer", 0.85),  # graded for reliability (issue 15)
        (OutcomeSource.HUMAN, "human:dana", 0.5),
        (OutcomeSource.DOWNSTREAM, "downstream:exec-engine", 0.2),
    ]
    [human] = outcomes.export(evaluator="human:dana")
    assert human.action is VerdictAction.SEND_BACK and human.stage1 is not None
    assert human.stage1.decision is Decision.ESCALATE_HUMAN
    # The prior's inputs as the router read them, so a refit fits on the router's features.
    assert human.stage1.claimed_success_rate is not None and human.stage1.evidence is not None

    for n in range(2, 9):  # outcomes_kept=5: the oldest go
        deps.records.report_downstream("o1", "sql-optimizer", 1, n / 10, reporter="exec-engine")
    labels = [o.label for o in outcomes.export(evaluator="downstream:exec-engine")]
    assert labels == [0.4, 0.5, 0.6, 0.7, 0.8]
    assert "human:dana" in outcomes.evaluators() and outcomes.skills() == ["sql-optimizer"]


def wait_for(check: Any, timeout_s: float = 5.0) -> bool:
    import time

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.02)
    return bool(check())


def test_a_subscriber_receives_every_kind_as_its_typed_model(deps: Deps) -> None:
    from workers.results.subscriber import Delivery, Subscription

    key = escalated(deps, "s1")
    deps.gate.desk.record(key, send_back(), reviewer="erin", channel=VerdictChannel.API)
    subscription = Subscription(
        deps.redis, deps.keys.results("s1"), group="runtime", consumer="c1", block_ms=100
    )
    got: list[Delivery] = []
    for _ in range(20):  # bounded: each poll blocks at most 100 ms
        got += subscription.poll()
        if len(got) >= 3:
            break
    assert [type(d.payload) for d in got] == [ReviewResult, HumanVerdict, HumanDecision]
    assert {d.review_key for d in got} == {key}
