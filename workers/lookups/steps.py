"""The two steps every review path takes around the lane: plan, then fold the answers in.

The fleet takes them one queue hop apart (Stage 1 plans; the refs worker looks up and
folds); the in-process review takes them in a row. Both build the package check Stage 1
ran from the same settings, so the plan made twice is the same plan.
"""

from __future__ import annotations

from schemas.hops import Stage1Report
from schemas.references import LookupAnswers, LookupPlan
from schemas.request import ReviewRequest
from workers.evaluate.references import plan_lookups, with_lookups
from workers.evaluate.wall.packages import PACKAGE_CODES
from workers.lookups.lane import Lane
from workers.package_index import package_check
from workers.settings import Settings


def plan_for(request: ReviewRequest, report: Stage1Report, settings: Settings) -> LookupPlan:
    """What ``request``'s output needs looked up; nothing when its Floor failed.

    A name the index must confirm left a (suspect) package finding in Stage 1's report:
    without one, the output's imports are not scanned a second time.
    """
    if not report.stage1.floor.passed:
        return LookupPlan()
    unsettled = any(i.code in PACKAGE_CODES for i in report.stage1.wall.issues)
    return plan_lookups(
        request,
        fetch_urls=settings.refs_fetch,
        max_urls=settings.refs_max_urls,
        packages=package_check(settings) if unsettled else None,
    )


def looked_up(
    request: ReviewRequest,
    report: Stage1Report,
    plan: LookupPlan,
    lane: Lane | None,
    settings: Settings,
) -> Stage1Report:
    """``report`` with the plan's answers folded in (none asked when there is no lane)."""
    if plan.empty:
        return report
    answers = lane.run(plan) if lane is not None and plan.needs_network else LookupAnswers()
    return with_lookups(report, request, plan, answers, package_check(settings))


def lane_wanted(settings: Settings) -> bool:
    """Whether anything is ever looked up: cited URLs, or package names on a live index."""
    return settings.refs_fetch or bool(settings.package_index_url)
