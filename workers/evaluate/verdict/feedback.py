"""Feedback synthesis: what the next attempt must fix and what it must keep."""

from __future__ import annotations

from collections.abc import Sequence

from schemas.quality import Dimension, Layer, QualityVector, ScoreStatus
from schemas.result import Feedback, FeedbackIssue, Violation, WallIssue
from schemas.stages import ViolationCode
from workers.evaluate.thresholds import ACCEPT_SCORE

MAX_ISSUES = 10


def synthesize_feedback(
    *,
    overall_score: float,
    quality: QualityVector,
    violations: Sequence[Violation],
    issues: Sequence[WallIssue],
) -> Feedback:
    """Turn violations, Wall issues and weak Ceiling dimensions into the seed's JSON shape."""
    specific = [
        FeedbackIssue(field=v.field or "structure", issue=v.message, fix=_violation_fix(v))
        for v in violations
    ]
    specific.extend(
        FeedbackIssue(
            field=i.field or i.dimension.value,
            issue=i.message,
            fix=i.fix or f"Improve {i.dimension.value}",
        )
        for i in issues
    )
    weak = _weak_ceiling(quality)
    specific.extend(
        FeedbackIssue(
            field=d.value,
            issue=f"{d.value} scored {v:.2f}: {j}",
            fix=f"Raise {d.value}: {j}" if j else f"Raise {d.value}",
        )
        for d, v, j in weak
    )
    strengths = tuple(
        f"{d.value}: {s.justification}" if s.justification else d.value
        for d in Dimension
        if (s := quality.get(d)).status is ScoreStatus.SCORED
        and s.value is not None
        and s.value >= ACCEPT_SCORE
    )
    return Feedback(
        overall_score=round(overall_score, 4),
        specific_issues=tuple(specific[:MAX_ISSUES]),
        strengths_to_preserve=strengths,
        iteration_guidance=_guidance(specific, strengths),
    )


#: Floor codes that mean the output does not parse as its kind.
_UNPARSED = frozenset(
    {
        ViolationCode.SYNTAX_ERROR,
        ViolationCode.INCOMPLETE_FUNCTION,
        ViolationCode.JSON_DECODE_ERROR,
        ViolationCode.SQL_PARSE_ERROR,
    }
)


def _violation_fix(violation: Violation) -> str:
    if violation.code in _UNPARSED:
        return f"Return output that parses: fix the {violation.code} at {violation.field or 'it'}"
    if violation.code is ViolationCode.MISSING_FIELD:
        return f"Add {violation.field}"
    if violation.code is ViolationCode.SCHEMA_VIOLATION:
        return f"Make {violation.field} satisfy the output schema"
    return "Meet the output contract"


def _weak_ceiling(quality: QualityVector) -> list[tuple[Dimension, float, str]]:
    weak = []
    for dimension in Dimension:
        score = quality.get(dimension)
        if (
            dimension.layer is Layer.CEILING
            and score.status is ScoreStatus.SCORED
            and score.value is not None
            and score.value < ACCEPT_SCORE
        ):
            weak.append((dimension, score.value, score.justification))
    return sorted(weak, key=lambda item: item[1])


def _guidance(specific: Sequence[FeedbackIssue], strengths: Sequence[str]) -> str:
    if not specific:
        return "No specific defects found; raise overall depth and precision."
    focus = ", ".join(dict.fromkeys(i.field for i in specific[:3]))
    keep = (
        " Do not rewrite what already works: " + "; ".join(s.split(":")[0] for s in strengths) + "."
        if strengths
        else ""
    )
    return f"Focus on {focus} first ({len(specific)} issue(s) in all).{keep}"
