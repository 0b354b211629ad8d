"""Stage 1's report with the world's answers folded in: more Wall findings, a new grade.

The look-ups run after the Floor and Wall (the network lane sits between Stage 1 and the
router), so their findings join a Wall already graded: each lowers the grounding score
shown, the definite ones the score the decision gates on, and the Wall's grade is read
again. Nothing else of the report changes.
"""

from __future__ import annotations

from schemas.hops import Stage1Report
from schemas.quality import Dimension, DimensionScore
from schemas.references import LookupAnswers, LookupPlan, ReferenceVerdict
from schemas.request import ReviewRequest
from workers.evaluate.findings import Finding
from workers.evaluate.references.findings import checked_references
from workers.evaluate.wall.certainty import is_definite
from workers.evaluate.wall.scoring import wall_result


def with_lookups(
    report: Stage1Report, request: ReviewRequest, plan: LookupPlan, answers: LookupAnswers
) -> Stage1Report:
    """``report`` with the findings and reference records of ``answers`` added."""
    findings, checks = checked_references(plan, answers)
    fetches = sum(page.requests for page in answers.pages)
    fetched = sum(page.body_bytes for page in answers.pages if page.requests)
    stage1 = report.stage1
    if stage1.wall.grade is None:  # the Floor failed: the Wall, and so this, did not run
        return report
    update: dict[str, object] = {
        "fetches": report.fetches + fetches,
        "fetched_bytes": report.fetched_bytes + fetched,
    }
    if findings:
        grounding = report.quality.grounding
        shown = max(0.0, (grounding.value or 0.0) - sum(f.penalty for f in findings))
        gate = grounding.gate if grounding.gate is not None else 1.0
        definite = max(0.0, gate - sum(f.penalty for f in findings if is_definite(f)))
        why = "; ".join(
            ([grounding.justification] if grounding.justification else [])
            + [_note(f) for f in findings]
        )[:1000]
        rescored = DimensionScore.scored(shown, why, definite=definite)
        update["quality"] = report.quality.model_copy(update={Dimension.GROUNDING.value: rescored})
        wall = wall_result(
            min(stage1.wall.grade, definite),
            stage1.wall.issues + tuple(f.issue for f in findings),
            feeds_critical_path=request.feeds_critical_path,
            grounding=stage1.wall.grounding,
        )
        stage1 = stage1.model_copy(
            update={"wall": wall, "passed": stage1.floor.passed and wall.passed}
        )
    update["stage1"] = stage1.model_copy(update={"references": stage1.references + checks})
    return report.model_copy(update=update)


def _note(found: Finding) -> str:
    prefix = "" if is_definite(found) else "suspect: "
    return prefix + found.issue.message


def summary(report: Stage1Report) -> dict[ReferenceVerdict, int]:
    """How many references got each verdict (for spans and the page)."""
    counts: dict[ReferenceVerdict, int] = {}
    for check in report.stage1.references:
        counts[check.verdict] = counts.get(check.verdict, 0) + 1
    return counts
