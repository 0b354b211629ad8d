"""The human gate, pure: who waits for a person, and the decision once a person judged.

The fleet's confidence rules and iteration thresholds send some attempts to a person
(``escalate_human``). Their verdict is the gold standard (dag-quality.md: weight 0.50
"at human gates"): the confidence is re-aggregated with the human signal at that weight,
the reviewer's dimension scores replace the fleet's, and the reviewer's action decides
what the DAG does next. The recomputed basis is what the node's next attempt compares
itself against.
"""

from __future__ import annotations

from collections.abc import Sequence

from schemas.decisions import Decision, Feedback, FeedbackIssue, Trend
from schemas.human import HumanDecision, HumanReason, HumanVerdict, VerdictAction
from schemas.quality import Dimension, DimensionScore, QualityVector
from schemas.request import ReviewRequest, Signals
from schemas.result import CeilingStatus, ReviewResult
from workers.evaluate.thresholds import ACCEPT_SCORE, ACCEPTABLE_BEST, HOPELESS_SCORE
from workers.evaluate.verdict.confidence import aggregate_confidence
from workers.evaluate.verdict.convergence import monitor_convergence
from workers.evaluate.verdict.feedback import MAX_ISSUES, synthesize_feedback
from workers.evaluate.verdict.final import decision_basis


def needs_human(result: ReviewResult) -> bool:
    """Whether ``result`` waits for a person: escalated to one, or flagged for one."""
    return result.decision is Decision.ESCALATE_HUMAN or result.confidence.human_review


def reasons_for_human(result: ReviewResult) -> tuple[HumanReason, ...]:
    """Why ``result`` went to a person, most specific first (the queue filters on these).

    The iteration decision records only its outcome, so the reasons are read back from
    the parts of the result that decide it, in the order ``decide_iteration`` tests them.
    """
    if not needs_human(result):
        return ()
    reasons: list[HumanReason] = []
    stage2 = result.stage2
    if result.confidence.human_review:
        reasons.append(HumanReason.DISAGREEMENT)
    if stage2 is not None and stage2.status is CeilingStatus.INDETERMINATE:
        reasons.append(HumanReason.JUDGE_FAILED)
    if stage2 is not None and stage2.bias is not None and stage2.bias.flagged:
        reasons.append(HumanReason.POSITION_BIAS)
    if reasons:
        return tuple(reasons)
    score, trend = result.basis.score, result.convergence.trend
    if result.attempt == 1 and score < HOPELESS_SCORE and result.stage1.floor.passed:
        return (HumanReason.HOPELESS,)
    if trend is Trend.OSCILLATING:
        return (HumanReason.OSCILLATING,)
    if trend in (Trend.PLATEAU, Trend.DEGRADING) and max(result.convergence.scores) < (
        ACCEPTABLE_BEST
    ):
        return (HumanReason.STALLED,)
    return (HumanReason.OUT_OF_ITERATIONS,)


def decide_after_human(action: VerdictAction, *, attempt: int, max_iterations: int) -> Decision:
    """The reviewer's action as the DAG's next step.

    Accept goes downstream. Send back iterates, even past the node's iteration budget: a
    person asked for another try. Reject iterates while attempts remain (the reasons go
    back as feedback, as a Floor rejection's do); on the last attempt it stays
    ``escalate_human``: the DAG must stop the node or a person must act outside the loop.
    """
    if action is VerdictAction.ACCEPT:
        return Decision.ACCEPT
    if action is VerdictAction.SEND_BACK or attempt < max_iterations:
        return Decision.ITERATE
    return Decision.ESCALATE_HUMAN


def decide_with_human(
    request: ReviewRequest,
    result: ReviewResult,
    verdict: HumanVerdict,
    history: Sequence[float] = (),
) -> HumanDecision:
    """The attempt's decision recomputed with the human verdict.

    ``history`` holds the earlier attempts' scores, oldest first (the request's own, or
    the fleet's record).
    """
    signals = request.signals or Signals()
    confidence = aggregate_confidence(
        signals.model_copy(update={"human": verdict.human_score}),
        downstream_critical=request.feeds_critical_path,
    )
    quality = with_human_scores(result.quality, verdict)
    floor_passed = result.stage1.floor.passed or Dimension.STRUCTURE in verdict.scores
    basis = decision_basis(quality, confidence.score, floor_passed)
    decision = decide_after_human(
        verdict.action, attempt=request.attempt, max_iterations=request.max_iterations
    )
    feedback = None
    if decision is Decision.ITERATE:
        feedback = _human_feedback(result, verdict, quality, basis.score)
    return HumanDecision(
        dag_id=result.dag_id,
        node_id=result.node_id,
        attempt=result.attempt,
        decision=decision,
        supersedes=result.decision,
        action=verdict.action,
        reviewer=verdict.reviewer,
        confidence=confidence,
        quality=quality,
        basis=basis,
        feedback=feedback,
        convergence=monitor_convergence(history, basis.score),
    )


def with_human_scores(quality: QualityVector, verdict: HumanVerdict) -> QualityVector:
    """``quality`` with the reviewer's dimension scores in place of the fleet's."""
    if not verdict.scores:
        return quality
    why = f"human reviewer {verdict.reviewer} ({verdict.action.value})"
    if verdict.comment:
        why += f": {verdict.comment[:300]}"
    return quality.model_copy(
        update={d.value: DimensionScore.scored(v, why) for d, v in verdict.scores.items()}
    )


def _human_feedback(
    result: ReviewResult, verdict: HumanVerdict, quality: QualityVector, score: float
) -> Feedback:
    """The reviewer's words first, their low dimension scores next, then the fleet's."""
    fleet = synthesize_feedback(
        overall_score=score,
        quality=quality,
        violations=result.stage1.floor.violations,
        issues=result.stage1.wall.issues,
    )
    said = verdict.feedback or verdict.comment
    own = [FeedbackIssue(field="human review", issue=said, fix=said)] if said else []
    own += [
        FeedbackIssue(
            field=d.value,
            issue=f"the reviewer scored {d.value} {v:.2f}",
            fix=f"Raise {d.value} to at least {ACCEPT_SCORE}",
        )
        for d, v in sorted(verdict.scores.items(), key=lambda item: item[1])
        if v < ACCEPT_SCORE
    ]
    guidance = f"A reviewer asked for changes: {said}" if said else fleet.iteration_guidance
    return fleet.model_copy(
        update={
            "specific_issues": (*own, *fleet.specific_issues)[:MAX_ISSUES],
            "iteration_guidance": guidance[:5000],
        }
    )
