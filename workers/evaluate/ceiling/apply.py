"""Merging a Ceiling verdict into Stage 1's quality vector, or marking it indeterminate.

A judge failure is not a quality failure: the Ceiling becomes indeterminate, never 0.
"""

from __future__ import annotations

import math

from schemas.hops import Stage1Report, Stage2Report
from schemas.judging import DimensionVerdict, JudgeVerdict, TokenUsage
from schemas.quality import CEILING_DIMENSIONS, Dimension, DimensionScore
from schemas.request import OutputKind, ReviewRequest
from schemas.result import Stage2Result
from workers.evaluate.ceiling.claims import check_claims, merged_grounding
from workers.evaluate.thresholds import JUSTIFY_ABOVE
from workers.evaluate.wall.grounding.checks import grounding_scope

_NONE_USED = TokenUsage()
#: Characters of output beyond which length starts to cost a judged score.
LENGTH_REFERENCE_CHARS: dict[OutputKind, int] = {
    OutputKind.TEXT: 6000,
    OutputKind.MARKDOWN: 8000,
    OutputKind.PYTHON: 12000,
    OutputKind.JSON: 12000,
    OutputKind.SQL: 4000,
    OutputKind.YAML: 8000,
    OutputKind.TOML: 4000,
    OutputKind.JAVASCRIPT: 12000,
    OutputKind.TYPESCRIPT: 12000,
    OutputKind.SHELL: 6000,
    OutputKind.HTML: 12000,
    OutputKind.XML: 12000,
    OutputKind.DOCKERFILE: 3000,
}
LENGTH_PENALTY_PER_DOUBLING = 0.05
LENGTH_PENALTY_CAP = 0.15


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
    (``ceiling.claims``); the checked claims are kept on ``stage2``.
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
    usage: TokenUsage = _NONE_USED,
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
