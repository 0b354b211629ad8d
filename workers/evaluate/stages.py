"""The two stages as pure functions over wire models.

No queues, no network, and no clock other than the one that times the engine itself.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from schemas.hops import Stage1Report, Stage2Report
from schemas.judging import DimensionVerdict, JudgeVerdict, TokenUsage
from schemas.quality import CEILING_DIMENSIONS, Dimension, DimensionScore, QualityVector
from schemas.request import OutputKind, ReviewRequest
from schemas.result import (
    FloorResult,
    Stage1Result,
    Stage2Result,
    WallIssue,
    WallResolution,
    WallResult,
)
from schemas.stages import Certainty, IssueCode
from workers.evaluate.ceiling_claims import check_claims, merged_grounding
from workers.evaluate.confidence import aggregate_confidence
from workers.evaluate.findings import Finding
from workers.evaluate.floor import check_floor
from workers.evaluate.grounding import grounding_scope
from workers.evaluate.thresholds import JUSTIFY_ABOVE
from workers.evaluate.wall import score_wall, wall_result

NO_USAGE = TokenUsage()
#: Characters of output beyond which length starts to cost a judged score.
LENGTH_REFERENCE_CHARS: dict[OutputKind, int] = {
    OutputKind.TEXT: 6000,
    OutputKind.MARKDOWN: 8000,
    OutputKind.PYTHON: 12000,
    OutputKind.JSON: 12000,
    OutputKind.SQL: 4000,
}
LENGTH_PENALTY_PER_DOUBLING = 0.05
LENGTH_PENALTY_CAP = 0.15


@dataclass(frozen=True, slots=True)
class WallJudgement:
    """What a cheap model said about the Wall dimensions, or why it could not say."""

    scores: Mapping[Dimension, DimensionVerdict] = field(default_factory=dict)
    usage: TokenUsage = NO_USAGE
    cost_usd: float = 0.0
    error: str | None = None


#: Asks a model for the judged part of the Wall; supplied by the judges layer.
WallJudge = Callable[[ReviewRequest], WallJudgement]


def run_stage1(request: ReviewRequest, *, wall_judge: WallJudge | None = None) -> Stage1Report:
    """Floor, then (only if it passed) Wall: BC-EVAL-002's short circuit.

    The Wall's deterministic checks always run; ``wall_judge``, when given, is called
    only for outputs that passed the Floor, and a dimension keeps the lower of the two
    scores. A judge failure is recorded as an issue, never as a score.
    """
    started = time.perf_counter()
    floor = check_floor(request.output, request.contract)
    judgement = WallJudgement()
    confidence = aggregate_confidence(
        request.signals, downstream_critical=request.feeds_critical_path
    )
    if not floor.passed:
        quality = _vector(
            structure=DimensionScore.scored(0.0, _floor_summary(floor)),
            wall=None,
            why="floor failed: layer not run",
        )
        wall = WallResult(passed=False, resolution=WallResolution.NOT_RUN)
    else:
        if wall_judge is not None:
            judgement = wall_judge(request)
        scores = score_wall(
            request.output,
            task=request.task,
            contract=request.contract,
            sources=request.sources,
            grounding=request.grounding,
        )
        shown, definite = dict(scores.scores), dict(scores.definite)
        for dimension, verdict in judgement.scores.items():
            if dimension in shown:
                shown[dimension] = min(shown[dimension], verdict.score)
                definite[dimension] = min(definite[dimension], verdict.score)
        grade = min(definite.values())
        if confidence.score is not None:
            grade = min(grade, confidence.score)
        issues = tuple(f.issue for f in scores.findings)
        if judgement.error is not None:
            issues += (_judge_unavailable(judgement.error),)
        wall = wall_result(
            grade,
            issues,
            feeds_critical_path=request.feeds_critical_path,
            grounding=scores.grounding,
        )
        justifications = _wall_justifications(scores.findings, judgement.scores)
        scope = grounding_scope(scores.grounding, len(request.sources))
        justifications[Dimension.GROUNDING] = f"{scope}; {justifications[Dimension.GROUNDING]}"
        quality = _vector(
            structure=DimensionScore.scored(1.0, "parses and meets its declared contract"),
            wall={
                d: DimensionScore.scored(v, justifications[d], definite=definite[d])
                for d, v in shown.items()
            },
            why="not escalated to Stage 2",
        )
    return Stage1Report(
        stage1=Stage1Result(passed=floor.passed and wall.passed, floor=floor, wall=wall),
        quality=quality,
        confidence=confidence,
        review_ms=(time.perf_counter() - started) * 1000,
        usage=judgement.usage,
        cost_usd=judgement.cost_usd,
    )


def _judge_unavailable(error: str) -> WallIssue:
    return WallIssue(
        dimension=Dimension.GROUNDING,
        code=IssueCode.JUDGE_INDETERMINATE,
        message=f"the wall judge failed; deterministic checks only: {error}"[:500],
        fix="",
        certainty=Certainty.SUSPECT,
    )


def apply_ceiling(
    request: ReviewRequest,
    report: Stage1Report,
    verdict: JudgeVerdict,
    *,
    review_ms: float,
    stage2: Stage2Result,
) -> Stage2Report:
    """Merge a Ceiling verdict: length-normalised, no unjustified score above 0.8.

    The verdict's claims, when it gave any and the node had input to ground in, are
    checked against that input and merged with Stage 1's findings into grounding
    (``ceiling_claims``); the checked claims are kept on ``stage2``.
    """
    chars = len(request.output.content)
    updates = {
        d.value: _ceiling_score(verdict.scores.get(d), chars, request.output.kind)
        for d in CEILING_DIMENSIONS
    }
    use = report.stage1.wall.grounding
    if verdict.claims and use is not None:
        issues = report.stage1.wall.issues
        claims = check_claims(verdict.claims, request, issues, use.policy)
        scope = grounding_scope(use, len(request.sources))
        updates[Dimension.GROUNDING.value] = merged_grounding(
            report.quality.grounding, claims, issues, scope
        )
        stage2 = stage2.model_copy(update={"claims": claims})
    return Stage2Report(
        stage2=stage2,
        quality=report.quality.model_copy(update=updates),
        review_ms=review_ms,
        usage=verdict.usage,
        cost_usd=verdict.cost_usd,
    )


def indeterminate_ceiling(
    report: Stage1Report,
    stage2: Stage2Result,
    *,
    review_ms: float,
    usage: TokenUsage = NO_USAGE,
    cost_usd: float = 0.0,
) -> Stage2Report:
    """A Ceiling whose judge failed: its dimensions say so; none scores 0 or passes."""
    why = f"judge failed: {stage2.error}"
    updates = {d.value: DimensionScore.indeterminate(why) for d in CEILING_DIMENSIONS}
    return Stage2Report(
        stage2=stage2,
        quality=report.quality.model_copy(update=updates),
        review_ms=review_ms,
        usage=usage,
        cost_usd=cost_usd,
    )


def length_penalty(chars: int, kind: OutputKind) -> float:
    """What verbosity costs a judged score: 0.05 a doubling past the reference, capped."""
    reference = LENGTH_REFERENCE_CHARS[kind]
    if chars <= reference:
        return 0.0
    return min(LENGTH_PENALTY_CAP, LENGTH_PENALTY_PER_DOUBLING * math.log2(chars / reference))


def _ceiling_score(
    verdict: DimensionVerdict | None, chars: int, kind: OutputKind
) -> DimensionScore:
    if verdict is None:
        return DimensionScore.indeterminate("the judge returned no score for this dimension")
    value = max(0.0, verdict.score - length_penalty(chars, kind))
    justification = verdict.justification.strip()
    if value > JUSTIFY_ABOVE and not justification:
        return DimensionScore.scored(
            JUSTIFY_ABOVE, "capped at 0.8: the judge gave no justification"
        )
    return DimensionScore.scored(value, justification)


def _vector(
    *, structure: DimensionScore, wall: Mapping[Dimension, DimensionScore] | None, why: str
) -> QualityVector:
    fields: dict[str, DimensionScore] = {"structure": structure}
    for dimension in Dimension:
        if dimension is Dimension.STRUCTURE:
            continue
        if wall is not None and dimension in wall:
            fields[dimension.value] = wall[dimension]
        else:
            fields[dimension.value] = DimensionScore.unscored(why)
    return QualityVector(**fields)


def _floor_summary(floor: FloorResult) -> str:
    codes = ", ".join(dict.fromkeys(v.code for v in floor.violations))
    return f"floor failed: {codes}"


def _wall_justifications(
    findings: tuple[Finding, ...], judged: Mapping[Dimension, DimensionVerdict]
) -> dict[Dimension, str]:
    notes: dict[Dimension, list[str]] = {d: [] for d in Dimension}
    for item in findings:
        suspect = item.issue.certainty is Certainty.SUSPECT
        notes[item.issue.dimension].append(
            f"suspect: {item.issue.message}" if suspect else item.issue.message
        )
    for dimension, verdict in judged.items():
        if verdict.justification:
            notes[dimension].append(f"judge: {verdict.justification}")
    return {d: "; ".join(n)[:1000] if n else _CLEAN[d] for d, n in notes.items() if d in _CLEAN}


_CLEAN = {
    Dimension.SUBSTANCE: "substantive content of a usual length; no filler or stubs found",
    Dimension.CONSISTENCY: "no contradictions, conflicting quantities or mismatched counts found",
    Dimension.GROUNDING: "citations resolve, URLs are well formed, claims are supported",
}
