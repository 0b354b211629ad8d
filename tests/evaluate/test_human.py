"""The human gate, pure: who waits for a person, and the decision once one judged."""

from __future__ import annotations

import json
from typing import Any

import pytest

from schemas.decisions import Decision, Trend
from schemas.human import (
    HumanReason,
    HumanVerdict,
    VerdictAction,
    VerdictChannel,
    VerdictInput,
)
from schemas.quality import Dimension
from schemas.request import ReviewRequest
from schemas.result import ReviewResult
from tests.evaluate.builders import decode, obj
from workers.evaluate.verdict.human import (
    decide_after_human,
    decide_with_human,
    needs_human,
    reasons_for_human,
)
from workers.review import review
from workers.settings import Settings
from workers.testing.scripted_judge import ScriptedJudge

A, IT, H = Decision.ACCEPT, Decision.ITERATE, Decision.ESCALATE_HUMAN
CONFLICT = {"peer": 0.85, "downstream": 0.35}


def reviewed(**fields: Any) -> tuple[ReviewRequest, ReviewResult]:
    request = decode(obj(**fields))
    price = Settings().price_of("claude-sonnet-4-5")
    return request, review(request, ScriptedJudge(), stage2_price=price)


def verdict(action: VerdictAction, **given: Any) -> HumanVerdict:
    typed = VerdictInput.model_validate_json(json.dumps({"action": action.value, **given}))
    return HumanVerdict(
        dag_id="d",
        node_id="n",
        attempt=1,
        action=action,
        human_score=typed.human_score,
        scores=typed.scores,
        feedback=typed.feedback,
        comment=typed.comment,
        reviewer="rita",
        channel=VerdictChannel.API,
        recorded_at="2026-01-01T00:00:00+00:00",
        machine_decision=Decision.ESCALATE_HUMAN,
    )


@pytest.mark.parametrize(
    ("action", "attempt", "expected"),
    [
        (VerdictAction.ACCEPT, 1, A),
        (VerdictAction.ACCEPT, 3, A),
        (VerdictAction.SEND_BACK, 1, IT),
        (VerdictAction.SEND_BACK, 3, IT),  # a person may grant one more try
        (VerdictAction.REJECT, 2, IT),
        (VerdictAction.REJECT, 3, H),  # rejected on the last allowed attempt: stop
    ],
)
def test_the_reviewers_action_decides(
    action: VerdictAction, attempt: int, expected: Decision
) -> None:
    assert decide_after_human(action, attempt=attempt, max_iterations=3) is expected


def test_the_human_signal_is_the_weakest_scored_dimension_else_the_actions_own() -> None:
    assert verdict(VerdictAction.ACCEPT).human_score == 1.0
    assert verdict(VerdictAction.SEND_BACK).human_score == 0.5
    assert verdict(VerdictAction.REJECT).human_score == 0.0
    scored = verdict(VerdictAction.ACCEPT, scores={"clarity": 0.7, "correctness": 0.9})
    assert scored.human_score == 0.7


def test_disagreeing_signals_wait_for_a_person_and_say_why() -> None:
    _, result = reviewed(signals=CONFLICT)
    assert needs_human(result)
    assert reasons_for_human(result) == (HumanReason.DISAGREEMENT,)


def test_an_accepted_result_waits_for_nobody() -> None:
    _, result = reviewed()
    assert result.decision is A
    assert not needs_human(result) and reasons_for_human(result) == ()


def test_a_hopeless_first_attempt_and_an_exhausted_one_name_their_reasons() -> None:
    _, hopeless = reviewed(output={"kind": "text", "content": "TODO"})
    assert hopeless.decision is H
    assert reasons_for_human(hopeless) == (HumanReason.HOPELESS,)
    broken = {"kind": "python", "content": "def f(:\n"}
    _, exhausted = reviewed(output=broken, attempt=3, max_iterations=3)
    assert reasons_for_human(exhausted) == (HumanReason.OUT_OF_ITERATIONS,)


def test_the_decision_recomputes_confidence_with_the_human_at_0_50() -> None:
    request, result = reviewed(signals=CONFLICT)
    decided = decide_with_human(request, result, verdict(VerdictAction.ACCEPT))
    assert decided.decision is A and decided.supersedes is H
    assert decided.confidence.weights["human"] == 0.5
    assert decided.confidence.human_review is False
    # (0.25 * 0.85 + 0.35 * 0.35 + 0.50 * 1.0) / 1.10
    assert decided.confidence.score == pytest.approx(0.759091, abs=1e-6)
    assert decided.basis.dimension == "confidence"
    assert decided.feedback is None


def test_a_send_back_puts_the_reviewers_words_first_in_the_feedback() -> None:
    request, result = reviewed(signals=CONFLICT)
    given = verdict(
        VerdictAction.SEND_BACK, feedback="cite the runbook", scores={"correctness": 0.3}
    )
    decided = decide_with_human(request, result, given, history=(0.2,))
    assert decided.decision is IT and decided.feedback is not None
    issues = decided.feedback.specific_issues
    assert (issues[0].field, issues[0].issue) == ("human review", "cite the runbook")
    assert issues[1].field == "correctness"
    assert decided.feedback.iteration_guidance.endswith("cite the runbook")
    assert decided.quality.get(Dimension.CORRECTNESS).value == 0.3
    assert "rita" in decided.quality.get(Dimension.CORRECTNESS).justification
    assert decided.basis.score == 0.3  # the reviewer's weakest mark gates
    assert decided.convergence.scores == (0.2, 0.3)
    assert decided.convergence.trend is Trend.IMPROVING
