"""The Wall: substance, consistency and grounding, and how a partial grade is read."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from schemas.quality import Dimension
from schemas.request import GroundingPolicy, NodeOutput, OutputContract, Source
from schemas.result import WallIssue, WallResolution, WallResult
from workers.evaluate.consistency import check_consistency
from workers.evaluate.findings import Finding, score_after
from workers.evaluate.grounding import check_grounding
from workers.evaluate.substance import check_substance

PASS_GRADE = 0.6
FAIL_GRADE = 0.3


@dataclass(frozen=True, slots=True)
class WallScores:
    """The Wall's per-dimension scores and every finding behind them."""

    scores: dict[Dimension, float]
    findings: tuple[Finding, ...]

    @property
    def grade(self) -> float:
        """The weakest Wall dimension: one severe defect is enough to fail the Wall."""
        return min(self.scores.values())


def score_wall(
    output: NodeOutput,
    *,
    task: str | None = None,
    contract: OutputContract | None = None,
    sources: Sequence[Source] = (),
    grounding: GroundingPolicy = GroundingPolicy.ABSTRACTIVE,
) -> WallScores:
    """Run the three deterministic Wall checks.

    ``task`` and ``contract`` set what substance expects: a short answer to a question is
    not thin, and a document its schema accepts is not empty. ``task`` and ``sources``
    are the node's input, which grounding checks the output against as strictly as
    ``grounding`` says. Each finding lowers
    the dimension it names (a contradiction of the input is a consistency defect).
    """
    findings = (
        *check_substance(output, task=task, contract=contract),
        *check_consistency(output),
        *check_grounding(output, task=task, sources=sources, policy=grounding),
    )
    dimensions = (Dimension.SUBSTANCE, Dimension.CONSISTENCY, Dimension.GROUNDING)
    return WallScores(
        scores={
            d: round(score_after(f for f in findings if f.issue.dimension is d), 4)
            for d in dimensions
        },
        findings=findings,
    )


def resolve_wall(grade: float, *, feeds_critical_path: bool) -> WallResolution:
    """Read a grade: >= 0.6 pass, < 0.3 fail, in between fail only on the critical path."""
    if grade >= PASS_GRADE:
        return WallResolution.PASS
    if grade < FAIL_GRADE:
        return WallResolution.FAIL
    return WallResolution.FAIL if feeds_critical_path else WallResolution.PASS_WITH_WARNING


def wall_result(
    grade: float, issues: tuple[WallIssue, ...], *, feeds_critical_path: bool
) -> WallResult:
    """The Wall's verdict for a grade and its issues."""
    resolution = resolve_wall(grade, feeds_critical_path=feeds_critical_path)
    return WallResult(
        passed=resolution is not WallResolution.FAIL,
        grade=round(grade, 4),
        resolution=resolution,
        issues=issues,
    )
