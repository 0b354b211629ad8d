"""The whole two-stage review in one process: what ``windags-eval review`` runs.

The fleet runs the same steps, one queue hop apart.
"""

from __future__ import annotations

from schemas.judging import ModelPrice
from schemas.request import ReviewRequest
from schemas.result import ReviewResult
from workers.evaluate import decide_escalation, finalize, run_ceiling, run_stage1
from workers.evaluate.stage1 import WallJudge
from workers.evaluate.wall.packages import PackageCheck, packages_to_confirm
from workers.judges.base import Judge
from workers.judges.ceiling import model_ceiling_judge
from workers.judges.factory import build_judge
from workers.judges.wall import stage1_judge
from workers.package_index import PackageIndex, package_check
from workers.settings import Settings


def review(
    request: ReviewRequest,
    judge: Judge,
    *,
    stage2_price: ModelPrice,
    budget_left: bool = True,
    trace_id: str | None = None,
    wall_judge: WallJudge | None = None,
    packages: PackageCheck | None = None,
) -> ReviewResult:
    """Stage 1, the escalation decision, Stage 2 when warranted, then the verdict."""
    report = run_stage1(request, wall_judge=wall_judge, packages=packages)
    escalation = decide_escalation(
        request, stage2_price=stage2_price, stage1=report.stage1, budget_left=budget_left
    )
    stage2 = (
        run_ceiling(request, report, model_ceiling_judge(judge)) if escalation.escalate else None
    )
    return finalize(request, report, escalation, stage2, trace_id=trace_id)


class Reviewer:
    """The in-process review with the judge the settings configure, built once."""

    def __init__(self, settings: Settings) -> None:
        self._judge = build_judge(settings)
        self._wall_judge = stage1_judge(self._judge)
        self._price = settings.price_of(settings.stage2_model)
        self._packages = package_check(settings)
        # A cache of this process: a batch asks the index once per name.
        self._index = PackageIndex(settings) if settings.package_index_url else None

    def __call__(self, request: ReviewRequest) -> ReviewResult:
        """Review ``request`` in this process, asking the index about names it must confirm."""
        packages = self._packages
        names = packages_to_confirm(request, packages)
        if names and self._index is not None:
            packages = packages.answered(self._index.lookup(names))
        return review(
            request,
            self._judge,
            stage2_price=self._price,
            wall_judge=self._wall_judge,
            packages=packages,
        )
