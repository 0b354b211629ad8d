"""The whole two-stage review in one process: what ``windags-eval review`` runs.

The fleet runs the same steps, one queue hop apart.
"""

from __future__ import annotations

from schemas.judging import ModelPrice
from schemas.request import ReviewRequest
from schemas.result import ReviewResult
from workers.evaluate import decide_escalation, finalize, run_ceiling, run_stage1
from workers.evaluate.stage1 import WallJudge
from workers.evaluate.wall.packages import PackageCheck
from workers.judges.base import Judge
from workers.judges.ceiling import model_ceiling_judge
from workers.judges.factory import build_judge
from workers.judges.wall import stage1_judge
from workers.lookups.lane import Lane
from workers.lookups.steps import lane_wanted, looked_up, plan_for
from workers.package_index import package_check
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
    settings: Settings | None = None,
    lane: Lane | None = None,
) -> ReviewResult:
    """Stage 1, its look-ups, the escalation decision, Stage 2 when warranted, the verdict.

    ``packages``: how Stage 1 settles package names (None: the snapshot alone);
    ``settings`` say what to look up (None: nothing); ``lane`` looks it up.
    """
    report = run_stage1(request, wall_judge=wall_judge, packages=packages)
    if settings is not None:
        report = looked_up(request, report, plan_for(request, report, settings), lane, settings)
    escalation = decide_escalation(
        request, stage2_price=stage2_price, stage1=report.stage1, budget_left=budget_left
    )
    stage2 = (
        run_ceiling(request, report, model_ceiling_judge(judge)) if escalation.escalate else None
    )
    return finalize(request, report, escalation, stage2, trace_id=trace_id)


class Reviewer:
    """The in-process review with the judge the settings configure, built once."""

    def __init__(self, settings: Settings, *, lane: Lane | None = None) -> None:
        self._judge = build_judge(settings)
        self._wall_judge = stage1_judge(self._judge)
        self._price = settings.price_of(settings.stage2_model)
        self._settings = settings
        self._packages = package_check(settings)
        # One lane for the process, with caches of its own: a batch that cites a URL
        # thirty times fetches it once, and asks the index once per name.
        if lane is None and lane_wanted(settings):
            lane = Lane.build(settings, None)
        self._lane = lane

    def __call__(self, request: ReviewRequest) -> ReviewResult:
        """Review ``request`` in this process, looking up what it cites."""
        return review(
            request,
            self._judge,
            stage2_price=self._price,
            wall_judge=self._wall_judge,
            packages=self._packages,
            settings=self._settings,
            lane=self._lane,
        )
