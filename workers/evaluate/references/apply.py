"""Stage 1's report with the world's answers folded in: more Wall findings, a new grade.

The look-ups run after the Floor and Wall (the network lane sits between Stage 1 and the
router), so their findings join a Wall already graded. The cited URLs add findings; the
package index's answers replace the package findings Stage 1 made before it had them
(a name newer than the snapshot was only suspect then). The grounding score is computed
again from the Wall's grounding issues (a wall judge's lower score still caps it), and
the grade again from every Wall dimension and the signals' confidence, as Stage 1 does.
"""

from __future__ import annotations

from collections.abc import Iterable

from schemas.hops import Stage1Report
from schemas.quality import Dimension, DimensionScore
from schemas.references import LookupAnswers, LookupPlan
from schemas.request import ReviewRequest
from schemas.stages import Certainty, WallIssue
from workers.evaluate.findings import Finding
from workers.evaluate.references.findings import checked_references
from workers.evaluate.wall.packages import PACKAGE_CODES, PackageCheck, package_findings
from workers.evaluate.wall.scoring import wall_result

_G = Dimension.GROUNDING
#: Rounding of each issue's recorded penalty (``findings.finding``): a score recomputed
#: from issues may differ from Stage 1's by this much per issue.
_SLACK = 1e-3


def with_lookups(
    report: Stage1Report,
    request: ReviewRequest,
    plan: LookupPlan,
    answers: LookupAnswers,
    packages: PackageCheck | None = None,
) -> Stage1Report:
    """``report`` with what ``answers`` say added (``packages``: the check Stage 1 ran)."""
    stage1 = report.stage1
    if stage1.wall.grade is None:  # the Floor failed: the Wall, and so this, did not run
        return report
    found, checks = checked_references(plan, answers)
    issues = stage1.wall.issues
    if packages is not None and answers.packages is not None:
        issues = tuple(i for i in issues if i.code not in PACKAGE_CODES)
        found += package_findings(request, packages.answered(answers.packages))
    issues += tuple(f.issue for f in found)
    update: dict[str, object] = {
        "fetches": report.fetches + sum(page.requests for page in answers.pages),
        "fetched_bytes": report.fetched_bytes
        + sum(page.body_bytes for page in answers.pages if page.requests),
    }
    if issues != stage1.wall.issues:
        grounding = _rescored(report.quality.grounding, stage1.wall.issues, issues, found)
        quality = report.quality.model_copy(update={_G.value: grounding})
        gates = [quality.get(d).gate for d in (Dimension.SUBSTANCE, Dimension.CONSISTENCY, _G)]
        gates.append(report.confidence.score)
        wall = wall_result(
            min(g for g in gates if g is not None),
            issues,
            feeds_critical_path=request.feeds_critical_path,
            grounding=stage1.wall.grounding,
        )
        update["quality"] = quality
        stage1 = stage1.model_copy(
            update={"wall": wall, "passed": stage1.floor.passed and wall.passed}
        )
    update["stage1"] = stage1.model_copy(update={"references": stage1.references + checks})
    return report.model_copy(update=update)


def _rescored(
    old: DimensionScore,
    before: tuple[WallIssue, ...],
    after: tuple[WallIssue, ...],
    found: list[Finding],
) -> DimensionScore:
    """The grounding score from the Wall's grounding issues, capped where a judge capped it."""
    shown_old = old.value if old.value is not None else 1.0
    gate_old = old.gate if old.gate is not None else shown_old
    shown = _score(after, definite_only=False)
    definite = _score(after, definite_only=True)
    if shown_old < _score(before, definite_only=False) - _SLACK * len(before):
        shown = min(shown, shown_old)  # a wall judge scored it lower than the checks did
    if gate_old < _score(before, definite_only=True) - _SLACK * len(before):
        definite = min(definite, gate_old)
    notes = [old.justification] if old.justification else []
    notes += [("" if _definite(f.issue) else "suspect: ") + f.issue.message for f in found]
    return DimensionScore.scored(shown, "; ".join(notes)[:1000], definite=definite)


def _score(issues: Iterable[WallIssue], *, definite_only: bool) -> float:
    penalties = (
        i.penalty for i in issues if i.dimension is _G and (_definite(i) or not definite_only)
    )
    return max(0.0, 1.0 - sum(penalties))


def _definite(issue: WallIssue) -> bool:
    return issue.certainty is Certainty.DEFINITE
