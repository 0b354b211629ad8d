"""The iterate loop against the real engine: each of the seed's stops, and a person's turn."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from schemas.decisions import Feedback
from schemas.human import VerdictAction
from schemas.request import NodeOutput, ReviewRequest
from tests.evaluate.builders import decode
from tests.runtime.engine_reviewer import EngineReviewer
from workers.runtime.loop import LoopOutcome, PersonMode, Producer, StopReason, iterate

PLAN = "# Plan\n\n1. Open with the headline.\n2. List the fixes.\n3. Close with the upgrade.\n"


def template(**fields: Any) -> ReviewRequest:
    body: dict[str, Any] = {
        "dag_id": "loop",
        "node_id": "node",
        "skill": {"id": "writer", "success_rate": 0.95, "stage": "expert"},
        "output": {"kind": "markdown", "content": PLAN},
        "node_cost_usd": 0.01,
        "downstream": [{"node_id": "next", "cost_usd": 0.02}],
        **fields,
    }
    return decode(body)


def with_signals(scores: list[tuple[float, float]]) -> tuple[EngineReviewer, Producer]:
    """A producer whose attempt N gets peer and downstream scores ``scores[N-1]``.

    The signals ride on the request: the engine reads them as the runtime's evaluators'.
    """
    reviewer = EngineReviewer()
    engine = reviewer.engine

    def scored(request: ReviewRequest) -> Any:
        peer, downstream = scores[request.attempt - 1]
        signals = decode(
            {
                **json.loads(request.model_dump_json(by_alias=True)),
                "signals": {"peer": peer, "downstream": downstream},
            }
        )
        return engine(signals)

    reviewer.engine = scored  # type: ignore[assignment]

    async def produce(attempt: int, feedback: Feedback | None) -> NodeOutput:
        return NodeOutput.model_validate_json(
            json.dumps({"kind": "markdown", "content": f"{PLAN}\nRevision {attempt}.\n"})
        )

    return reviewer, produce


def run(reviewer: EngineReviewer, produce: Producer, **options: Any) -> LoopOutcome:
    request = template(**options.pop("fields", {}))
    return asyncio.run(iterate(reviewer, request, produce, timeout_s=5, **options))


def test_a_floor_failure_is_fixed_from_the_feedback_and_the_second_attempt_accepted() -> None:
    seen: list[Feedback | None] = []

    async def produce(attempt: int, feedback: Feedback | None) -> NodeOutput:
        seen.append(feedback)
        body = {"title": "Billing 2.4", "changes": ["tax per line"]}
        for issue in feedback.specific_issues if feedback else ():
            body[issue.field] = "filled in"
        return NodeOutput.model_validate_json(
            json.dumps({"kind": "json", "content": json.dumps(body)})
        )

    fields = {"contract": {"required_fields": ["title", "summary", "changes"]}}
    outcome = run(EngineReviewer(), produce, fields=fields)
    assert (outcome.accepted, outcome.stop, outcome.kept_attempt) == (True, StopReason.ACCEPTED, 2)
    assert [a.result.decision for a in outcome.attempts] == ["iterate", "accept"]
    assert seen[0] is None and seen[1] is not None
    assert [i.field for i in seen[1].specific_issues] == ["summary"]
    assert outcome.output is not None and '"summary"' in outcome.output.content


def test_a_plateau_accepts_the_best_attempt_even_when_it_is_an_earlier_one() -> None:
    reviewer, produce = with_signals([(0.70, 0.72), (0.69, 0.71)])
    outcome = run(reviewer, produce)
    assert (outcome.accepted, outcome.stop, outcome.kept_attempt) == (True, StopReason.PLATEAU, 1)
    assert outcome.output == outcome.attempts[0].output != outcome.attempts[1].output


def test_a_decline_reverts_to_the_best_previous_attempt() -> None:
    reviewer, produce = with_signals([(0.70, 0.72), (0.55, 0.60)])
    outcome = run(reviewer, produce)
    assert outcome.attempts[-1].result.convergence.trend == "degrading"
    assert (outcome.accepted, outcome.stop, outcome.kept_attempt) == (True, StopReason.DEGRADING, 1)


def test_oscillating_scores_stop_the_loop_and_hand_over_to_the_runtime() -> None:
    # Resumed at attempt 3: the fleet remembers 0.50 then 0.30 (a person sent it back).
    reviewer, produce = with_signals([(0.0, 0.0), (0.0, 0.0), (0.45, 0.45)])
    reviewer.scores["node"] = [0.50, 0.30]
    fields = {"attempt": 3, "max_iterations": 5}
    outcome = run(reviewer, produce, fields=fields, person=PersonMode.HAND_OVER)
    assert outcome.attempts[0].result.convergence.trend == "oscillating"
    assert (outcome.stop, outcome.accepted, reviewer.asked) == (StopReason.OSCILLATING, False, [])
    # The best attempt is the first, made before this loop: its output is the runtime's.
    assert (outcome.kept_attempt, outcome.output) == (1, None)


def test_max_iterations_escalates_and_a_person_who_accepts_ends_the_loop() -> None:
    reviewer, produce = with_signals([(0.55, 0.6), (0.65, 0.7)])
    reviewer.actions = [VerdictAction.ACCEPT]
    outcome = run(reviewer, produce, fields={"max_iterations": 2})
    assert reviewer.asked == ["loop:node:2"]
    assert (outcome.accepted, outcome.stop, outcome.kept_attempt) == (
        True,
        StopReason.PERSON_ACCEPTED,
        2,
    )
    assert outcome.person is not None and outcome.person.verdict.reviewer == "alice"


def test_a_person_who_sends_back_gets_another_attempt_with_their_feedback() -> None:
    reviewer, produce = with_signals([(0.9, 0.3), (0.85, 0.85)])  # 0.6 apart: a person looks
    reviewer.actions = [VerdictAction.SEND_BACK]
    outcome = run(reviewer, produce)
    assert reviewer.asked == ["loop:node:1"]
    assert [a.result.decision for a in outcome.attempts] == ["escalate_human", "accept"]
    assert outcome.stop is StopReason.ACCEPTED and outcome.kept_attempt == 2


def test_running_the_loop_again_reviews_nothing_twice() -> None:
    reviewer, produce = with_signals([(0.70, 0.72), (0.69, 0.71)])
    first = run(reviewer, produce)
    again = run(reviewer, produce)
    assert [a.result for a in again.attempts] == [a.result for a in first.attempts]
    assert len(reviewer.reviewed) == 2


def test_a_fundamentally_wrong_first_attempt_goes_to_a_person_at_once() -> None:
    reviewer, produce = with_signals([(0.1, 0.1)])
    outcome = run(reviewer, produce, person=PersonMode.HAND_OVER)
    assert (len(outcome.attempts), outcome.accepted, outcome.stop) == (
        1,
        False,
        StopReason.ESCALATED,
    )


def test_a_person_who_rejects_the_last_allowed_attempt_stops_the_node() -> None:
    reviewer, produce = with_signals([(0.1, 0.1)])
    reviewer.actions = [VerdictAction.REJECT]
    outcome = run(reviewer, produce, fields={"max_iterations": 1})
    assert (outcome.accepted, outcome.stop) == (False, StopReason.PERSON_REJECTED)
    assert outcome.person is not None and outcome.person.decision.decision == "escalate_human"
