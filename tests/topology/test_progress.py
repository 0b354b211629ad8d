"""A DAG's progress folded from its stream entries: states, people's decisions, spend."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from schemas.decisions import Decision
from schemas.human import HumanDecision, HumanVerdict, VerdictAction, VerdictChannel
from schemas.progress import NodeState
from schemas.result import ErrorCode, ReviewError, ReviewResult
from tests.topology.reference import demo_shape
from workers.evaluate.verdict.human import needs_human
from workers.intake import request_from_obj
from workers.local.demo import sample_dag
from workers.review import Reviewer
from workers.settings import JudgeBackend, Settings
from workers.topology import Topology
from workers.topology.progress import ProgressFold

LIMITS = {"max_request_bytes": 10**7, "max_output_chars": 10**6}


@pytest.fixture(scope="module")
def reviewed() -> list[ReviewResult]:
    review = Reviewer(Settings(judge_backend=JudgeBackend.BUILTIN))
    return [review(request_from_obj(node, **LIMITS)) for node in sample_dag("demo")]


Entry = ReviewResult | ReviewError | HumanVerdict | HumanDecision


def folded(entries: Sequence[Entry]) -> ProgressFold:
    fold = ProgressFold("demo")
    for n, entry in enumerate(entries, 1):
        fold.add(f"{n}-0", entry)
    return fold


def people(
    result: ReviewResult, action: VerdictAction, decision: Decision
) -> list[HumanVerdict | HumanDecision]:
    verdict = HumanVerdict(
        dag_id="demo",
        node_id=result.node_id,
        attempt=result.attempt,
        action=action,
        human_score=0.9,
        reviewer="dana",
        channel=VerdictChannel.API,
        recorded_at="2026-12-03T13:00:00.000+00:00",
        machine_decision=result.decision,
    )
    recomputed = HumanDecision(
        dag_id="demo",
        node_id=result.node_id,
        attempt=result.attempt,
        decision=decision,
        supersedes=result.decision,
        action=action,
        reviewer="dana",
        confidence=result.confidence,
        quality=result.quality,
        basis=result.basis,
        convergence=result.convergence,
    )
    return [verdict, recomputed]


def test_the_demo_dag_shows_its_registered_nodes_with_the_states_of_the_reviewed_ones(
    reviewed: list[ReviewResult],
) -> None:
    topology = Topology(demo_shape())
    progress = folded(list(reviewed)).progress(topology)
    assert [n.node_id for n in progress.nodes] == list(topology.ids)
    states = {n.node_id: n.state for n in progress.nodes}
    assert sum(s is NodeState.PENDING for s in states.values()) == 4  # consumers only
    waiting = {r.node_id for r in reviewed if needs_human(r)}
    assert {n for n, s in states.items() if s is NodeState.WAITING_FOR_PERSON} == waiting
    for result in reviewed:
        if result.node_id not in waiting:
            expected = {Decision.ACCEPT: NodeState.ACCEPTED, Decision.ITERATE: NodeState.ITERATING}
            assert states[result.node_id] is expected[result.decision]
    totals = progress.totals
    assert totals.nodes == 18 and totals.counts[NodeState.PENDING] == 4
    assert totals.escalated == sum(r.escalation.escalate for r in reviewed)
    node_spend = sum(r.envelope.node_cost_usd for r in reviewed)
    assert totals.node_spend_usd == pytest.approx(node_spend)
    assert totals.budget_usd == 0.75 and totals.over_budget is (totals.spend_usd > 0.75)
    assert progress.dag_version == 1 and progress.critical_path_s == 700.0
    plan = next(n for n in progress.nodes if n.node_id == "plan")
    assert plan.critical and plan.quality == reviewed[0].quality and plan.attempt == 1


def test_a_persons_decision_replaces_waiting_and_names_the_reviewer(
    reviewed: list[ReviewResult],
) -> None:
    waiting = next(r for r in reviewed if r.decision is Decision.ESCALATE_HUMAN)
    entries = [*reviewed, *people(waiting, VerdictAction.SEND_BACK, Decision.ITERATE)]
    node = next(n for n in folded(entries).progress().nodes if n.node_id == waiting.node_id)
    assert (node.state, node.decision, node.decided_by) == (
        NodeState.ITERATING,
        Decision.ITERATE,
        "dana",
    )
    entries = [*reviewed, *people(waiting, VerdictAction.REJECT, Decision.ESCALATE_HUMAN)]
    node = next(n for n in folded(entries).progress().nodes if n.node_id == waiting.node_id)
    assert node.state is NodeState.REJECTED


def test_the_latest_attempt_decides_and_every_attempt_counts_toward_spend(
    reviewed: list[ReviewResult],
) -> None:
    first = reviewed[0]
    second = first.model_copy(update={"attempt": 2, "decision": Decision.ITERATE})
    error = ReviewError(
        dag_id="demo",
        node_id=first.node_id,
        attempt=3,
        code=ErrorCode.POISON,
        message="<b>worker died</b> [red]x[/red]",
        cost_usd=0.5,
    )
    fold = folded([second, first])  # an older attempt arriving late changes nothing
    node = fold.progress().nodes[0]
    assert (node.attempt, node.state, node.attempts) == (2, NodeState.ITERATING, 2)
    fold.add("9-0", error)
    node = fold.progress().nodes[0]
    assert (node.state, node.error, node.attempt) == (NodeState.ERROR, error.message, 3)
    assert node.review_spend_usd == pytest.approx(0.5 + 2 * first.envelope.review_cost_usd)
    assert fold.progress().last_entry_id == "9-0"


def test_without_a_shape_nodes_appear_as_first_seen_and_nothing_is_pending(
    reviewed: list[ReviewResult],
) -> None:
    progress = folded(list(reversed(reviewed))).progress()
    assert [n.node_id for n in progress.nodes] == [r.node_id for r in reversed(reviewed)]
    assert progress.dag_version is None and progress.totals.budget_usd is None
    assert progress.totals.counts[NodeState.PENDING] == 0
    assert not any(n.registered or n.critical for n in progress.nodes)
