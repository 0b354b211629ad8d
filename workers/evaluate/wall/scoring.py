"""The Wall: substance, consistency and grounding, and how a partial grade is read."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from schemas.quality import Dimension
from schemas.request import GroundingPolicy, NodeOutput, OutputContract, Source
from schemas.result import GroundingUse, WallIssue, WallResolution, WallResult
from workers.evaluate.findings import Finding, score_after
from workers.evaluate.wall.certainty import classify, is_definite
from workers.evaluate.wall.code_checks import check_code
from workers.evaluate.wall.consistency import check_consistency
from workers.evaluate.wall.grounding.checks import ground
from workers.evaluate.wall.grounding.policy import read_brief
from workers.evaluate.wall.packages import PackageCheck, check_packages
from workers.evaluate.wall.substance import check_substance

PASS_GRADE = 0.6
FAIL_GRADE = 0.3


_DIMENSIONS = (Dimension.SUBSTANCE, Dimension.CONSISTENCY, Dimension.GROUNDING)


@dataclass(frozen=True, slots=True)
class WallScores:
    """The Wall's per-dimension scores and every finding behind them."""

    scores: dict[Dimension, float]
    """Each dimension after every finding, suspect ones included: what the vector shows."""
    findings: tuple[Finding, ...]
    definite: dict[Dimension, float]
    """Each dimension after its definite findings only: what the Wall is graded on."""
    grounding: GroundingUse | None = None
    """The grounding policy applied and why; null when there was no input to check against."""

    @property
    def grade(self) -> float:
        """The weakest Wall dimension on definite findings: one sure defect fails the Wall."""
        return min(self.definite.values())


def score_wall(
    output: NodeOutput,
    *,
    task: str | None = None,
    contract: OutputContract | None = None,
    sources: Sequence[Source] = (),
    grounding: GroundingPolicy | None = None,
    packages: PackageCheck | None = None,
) -> WallScores:
    """Run the three deterministic Wall checks.

    ``contract`` and the task's ask set what substance expects: a short answer to a
    question is not thin, and a document its schema accepts is not empty. The material
    pasted into ``task`` and the ``sources`` are the node's input, which grounding checks
    the output against as strictly as ``grounding`` (None: the policy the task implies)
    says. The packages the output uses are checked as ``packages`` says (None: the
    shipped snapshot is the authority, no operator allowlist). Each finding lowers the
    dimension it names (a contradiction of the input is a consistency defect); only
    definite findings lower the grade.
    """
    brief = read_brief(task, sources, grounding)
    findings = tuple(
        classify(f, brief.use)
        for f in (
            *check_substance(output, task=brief.parts.ask, contract=contract),
            *check_consistency(output),
            *check_code(output, contract),
            *ground(output, brief),
            *check_packages(
                output, packages or PackageCheck(), task=task, sources=sources, contract=contract
            ),
        )
    )
    return WallScores(
        scores=_scores(findings),
        findings=findings,
        definite=_scores(tuple(f for f in findings if is_definite(f))),
        grounding=brief.use,
    )


def _scores(findings: tuple[Finding, ...]) -> dict[Dimension, float]:
    return {
        d: round(score_after(f for f in findings if f.issue.dimension is d), 4) for d in _DIMENSIONS
    }


def resolve_wall(grade: float, *, feeds_critical_path: bool) -> WallResolution:
    """Read a grade: >= 0.6 pass, < 0.3 fail, in between fail only on the critical path."""
    if grade >= PASS_GRADE:
        return WallResolution.PASS
    if grade < FAIL_GRADE:
        return WallResolution.FAIL
    return WallResolution.FAIL if feeds_critical_path else WallResolution.PASS_WITH_WARNING


def wall_result(
    grade: float,
    issues: tuple[WallIssue, ...],
    *,
    feeds_critical_path: bool,
    grounding: GroundingUse | None = None,
) -> WallResult:
    """The Wall's verdict for a grade and its issues."""
    resolution = resolve_wall(grade, feeds_critical_path=feeds_critical_path)
    return WallResult(
        passed=resolution is not WallResolution.FAIL,
        grade=round(grade, 4),
        resolution=resolution,
        issues=issues,
        grounding=grounding,
    )
