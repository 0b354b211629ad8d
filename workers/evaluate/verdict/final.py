"""The last step: decision, feedback, convergence, envelope and near misses."""

from __future__ import annotations

from schemas.hops import Stage1Report, Stage2Report
from schemas.quality import Dimension, QualityVector
from schemas.request import ReviewRequest
from schemas.result import (
    CeilingStatus,
    Decision,
    DecisionBasis,
    Envelope,
    EscalationDecision,
    ReviewResult,
)
from workers.evaluate.ceiling.claims import merged_issues
from workers.evaluate.thresholds import ACCEPT_SCORE, HOPELESS_SCORE
from workers.evaluate.verdict.convergence import monitor_convergence
from workers.evaluate.verdict.feedback import synthesize_feedback
from workers.evaluate.verdict.iteration import decide_iteration
from workers.evaluate.verdict.margins import detect_near_misses, nearest_threshold, timeout_margin
from workers.evaluate.wall.scoring import FAIL_GRADE, PASS_GRADE


def decision_basis(
    quality: QualityVector, confidence_score: float | None, floor_passed: bool
) -> DecisionBasis:
    """The named gate that decides: the weakest scored dimension, or the confidence.

    Gating on the weakest dimension keeps every dimension separate (no weighted collapse,
    BC-EVAL-006): to be accepted, each one must clear the bar on its own. A dimension is
    read at its gate: suspect findings alone never send an output back.
    """
    if not floor_passed:
        return DecisionBasis(dimension=Dimension.STRUCTURE.value, score=0.0)
    candidates = {d.value: v for d, v in quality.gates().items()}
    if confidence_score is not None:
        candidates["confidence"] = confidence_score
    name = min(candidates, key=lambda k: (candidates[k], k))
    return DecisionBasis(dimension=name, score=round(candidates[name], 6))


def finalize(
    request: ReviewRequest,
    report: Stage1Report,
    escalation: EscalationDecision,
    stage2: Stage2Report | None,
    *,
    trace_id: str | None = None,
) -> ReviewResult:
    """Assemble the ReviewResult. The envelope is computed for every node (BC-EVAL-001)."""
    quality = stage2.quality if stage2 is not None else report.quality
    floor_passed = report.stage1.floor.passed
    basis = decision_basis(quality, report.confidence.score, floor_passed)
    convergence = monitor_convergence(request.history, basis.score)
    ceiling_failed = stage2 is not None and stage2.stage2.status is CeilingStatus.INDETERMINATE
    biased = stage2 is not None and stage2.stage2.bias is not None and stage2.stage2.bias.flagged
    decision = decide_iteration(
        basis.score,
        attempt=request.attempt,
        max_iterations=request.max_iterations,
        convergence=convergence,
        human_review=report.confidence.human_review or ceiling_failed or biased,
        floor_failed=not floor_passed,
    )
    feedback = None
    if decision is Decision.ITERATE:
        issues = report.stage1.wall.issues
        if stage2 is not None and stage2.stage2.claims:  # each claim once, Stage 1's merged
            issues = merged_issues(issues, stage2.stage2.claims)
        feedback = synthesize_feedback(
            overall_score=basis.score,
            quality=quality,
            violations=report.stage1.floor.violations,
            issues=issues,
        )
    _, quality_margin = nearest_threshold(basis.score, (ACCEPT_SCORE, HOPELESS_SCORE))
    margin_t = timeout_margin(request.node_elapsed_s, request.node_timeout_s)
    return ReviewResult(
        dag_id=request.dag_id,
        node_id=request.node_id,
        attempt=request.attempt,
        stage1=report.stage1,
        stage2=stage2.stage2 if stage2 is not None else None,
        escalation=escalation,
        quality=quality,
        confidence=report.confidence,
        decision=decision,
        basis=basis,
        feedback=feedback,
        convergence=convergence,
        envelope=_envelope(
            request, report, stage2, quality_margin if floor_passed else None, margin_t
        ),
        near_misses=detect_near_misses(
            quality=(basis.dimension, basis.score, (ACCEPT_SCORE, HOPELESS_SCORE))
            if floor_passed
            else None,
            wall_grade=report.stage1.wall.grade,
            wall_thresholds=(PASS_GRADE, FAIL_GRADE),
            escalation=(escalation.expected_waste, escalation.stage2_cost),
            timeout=margin_t,
        ),
        trace_id=trace_id,
    )


def _envelope(
    request: ReviewRequest,
    report: Stage1Report,
    stage2: Stage2Report | None,
    quality_margin: float | None,
    margin_t: float | None,
) -> Envelope:
    stages = ["floor"]
    if report.stage1.wall.grade is not None:
        stages.append("wall")
    usage, cost, review_ms = report.usage, report.cost_usd, report.review_ms
    if stage2 is not None:
        stages.append("ceiling")
        usage, cost, review_ms = (
            usage + stage2.usage,
            cost + stage2.cost_usd,
            (review_ms + stage2.review_ms),
        )
    return Envelope(
        review_cost_usd=round(cost, 8),
        tokens=usage,
        node_cost_usd=request.node_cost_usd,
        output_chars=len(request.output.content),
        review_latency_ms=round(review_ms, 3),
        node_elapsed_s=request.node_elapsed_s,
        timeout_margin=None if margin_t is None else round(margin_t, 6),
        quality_margin=None if quality_margin is None else round(quality_margin, 6),
        stages_run=tuple(stages),
        fetches=report.fetches,
        fetched_bytes=report.fetched_bytes,
    )
