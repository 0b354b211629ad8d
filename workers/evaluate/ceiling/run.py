"""Stage 2: ask a judge for the Ceiling, and control position bias on pairwise checks.

A judge failure is not a quality failure: the Ceiling becomes indeterminate, never 0.
"""

from __future__ import annotations

import time
from statistics import fmean

from schemas.hops import Stage1Report, Stage2Report
from schemas.judging import JudgeTask, JudgeTier, JudgeVerdict
from schemas.quality import CEILING_DIMENSIONS
from schemas.request import ReviewRequest
from schemas.result import BiasCheck, CeilingStatus, Stage2Result
from workers.evaluate.ceiling.apply import apply_ceiling, indeterminate_ceiling
from workers.evaluate.ceiling.bias import position_check
from workers.evaluate.ceiling.judge import CeilingJudge, JudgeFailure
from workers.evaluate.judge_task import task_for


def run_ceiling(request: ReviewRequest, report: Stage1Report, judge: CeilingJudge) -> Stage2Report:
    """Score every Ceiling dimension in one structured call, then the pairwise check."""
    started = time.perf_counter()
    verdict = judge(task_for(request, JudgeTier.CEILING, CEILING_DIMENSIONS))
    if isinstance(verdict, JudgeFailure):
        failed = Stage2Result(
            status=CeilingStatus.INDETERMINATE,
            model=verdict.model,
            error=verdict.error,
            calls=verdict.calls,
        )
        return indeterminate_ceiling(
            report,
            failed,
            review_ms=_ms_since(started),
            usage=verdict.usage,
            cost_usd=verdict.cost_usd,
        )
    bias, pair_verdicts = (None, []) if request.baseline is None else both_orders(request, judge)
    usage = sum((v.usage for v in pair_verdicts), verdict.usage)
    stage2 = Stage2Result(
        status=CeilingStatus.SCORED,
        model=verdict.model,
        bias=bias,
        calls=verdict.calls + sum(v.calls for v in pair_verdicts),
    )
    merged = verdict.model_copy(
        update={
            "usage": usage,
            "cost_usd": verdict.cost_usd + sum(v.cost_usd for v in pair_verdicts),
        }
    )
    return apply_ceiling(request, report, merged, review_ms=_ms_since(started), stage2=stage2)


def both_orders(
    request: ReviewRequest, judge: CeilingJudge
) -> tuple[BiasCheck | None, list[JudgeVerdict]]:
    """Run the comparison candidate-first and baseline-first; rerun once if they disagree.

    The check is None when the judge failed before one pair was done (BC-EVAL-004).
    """
    verdicts: list[JudgeVerdict] = []
    check = None
    for attempt in range(2):
        forward = judge(_pair(request, candidate_first=True))
        if isinstance(forward, JudgeFailure):
            return check, verdicts
        reverse = judge(_pair(request, candidate_first=False))
        if isinstance(reverse, JudgeFailure):
            return check, verdicts
        verdicts += [forward, reverse]
        check = position_check(
            fmean(s.score for s in forward.scores.values()),
            1.0 - fmean(s.score for s in reverse.scores.values()),
            retried=attempt > 0,
        )
        if not check.flagged:
            break
    return check, verdicts


def _pair(request: ReviewRequest, *, candidate_first: bool) -> JudgeTask:
    assert request.baseline is not None
    first, second = (
        (request.output, request.baseline)
        if candidate_first
        else (request.baseline, request.output)
    )
    return JudgeTask(
        tier=JudgeTier.PAIRWISE,
        dimensions=CEILING_DIMENSIONS,
        output=first,
        other=second,
        task=request.task,
        sources=request.sources,
    )


def _ms_since(started: float) -> float:
    return (time.perf_counter() - started) * 1000
