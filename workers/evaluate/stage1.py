"""Stage 1 as a pure function over wire models: the Floor, then the Wall.

No queues, no network, and no clock other than the one that times the engine itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from schemas.hops import Stage1Report
from schemas.judging import DimensionVerdict, TokenUsage
from schemas.quality import Dimension, DimensionScore, QualityVector
from schemas.request import ReviewRequest
from schemas.result import FloorResult, Stage1Result, WallIssue, WallResolution, WallResult
from schemas.stages import Certainty, IssueCode
from workers.evaluate.code.blocks import listed_blocks
from workers.evaluate.findings import Finding
from workers.evaluate.floor.structure import check_floor
from workers.evaluate.verdict.confidence import aggregate_confidence
from workers.evaluate.wall.grounding.checks import grounding_scope
from workers.evaluate.wall.packages import PackageCheck
from workers.evaluate.wall.scoring import score_wall, wall_result

NO_USAGE = TokenUsage()


@dataclass(frozen=True, slots=True)
class WallJudgement:
    """What a cheap model said about the Wall dimensions, or why it could not say."""

    scores: Mapping[Dimension, DimensionVerdict] = field(default_factory=dict)
    usage: TokenUsage = NO_USAGE
    cost_usd: float = 0.0
    error: str | None = None


#: Asks a model for the judged part of the Wall; supplied by the judges layer.
WallJudge = Callable[[ReviewRequest], WallJudgement]


def run_stage1(
    request: ReviewRequest,
    *,
    wall_judge: WallJudge | None = None,
    packages: PackageCheck | None = None,
) -> Stage1Report:
    """Floor, then (only if it passed) Wall: BC-EVAL-002's short circuit.

    The Wall's deterministic checks always run; ``wall_judge``, when given, is called
    only for outputs that passed the Floor, and a dimension keeps the lower of the two
    scores. A judge failure is recorded as an issue, never as a score. ``packages`` says
    how the packages the output uses are settled (None: by the shipped snapshot alone).
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
            packages=packages,
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
        stage1=Stage1Result(
            passed=floor.passed and wall.passed,
            floor=floor,
            wall=wall,
            code_blocks=listed_blocks(request.output),
        ),
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
