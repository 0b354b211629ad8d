"""Reviewing corpus items with the engine in-process: shared by recall and economics."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bench import common
from schemas.hops import Stage1Report
from schemas.quality import CEILING_DIMENSIONS
from schemas.request import ReviewRequest
from workers.evaluate import run_ceiling, run_stage1
from workers.judges.builtin import BuiltinJudge
from workers.judges.ceiling import model_ceiling_judge

#: A Ceiling dimension below this flags the output (the iteration threshold).
CEILING_FLAG_BELOW = 0.8


def item_request(item: dict[str, Any], **context: Any) -> ReviewRequest:
    """A review request for a corpus item; ``context`` replaces top-level fields."""
    obj: dict[str, Any] = {
        "dag_id": "corpus",
        "node_id": item["id"],
        "skill": {"id": f"skill-{item['kind']}", "success_rate": 0.9},
        "output": {"kind": item["kind"], "content": item["content"]},
        "node_cost_usd": 0.02,
    }
    if item.get("task"):
        obj["task"] = item["task"]
    if item.get("contract"):
        obj["contract"] = item["contract"]
    obj.update(context)
    return common.build_request(obj)


@dataclass(frozen=True)
class Verdicts:
    """What Stage 1 (on and off the critical path) and a Ceiling say about one item."""

    floor_passed: bool
    wall_grade: float | None
    passed_critical: bool
    passed_noncritical: bool
    ceiling_low: tuple[str, ...]
    """Ceiling dimensions below 0.8 (built-in judge); empty when Stage 1 failed."""
    floor_codes: tuple[str, ...]
    wall_codes: tuple[str, ...]

    @property
    def ceiling_flags(self) -> bool:
        """A Ceiling run on this item would flag it."""
        return bool(self.ceiling_low)


def _downstream(critical: bool) -> list[dict[str, Any]]:
    return [{"node_id": "next", "cost_usd": 0.05, "critical": critical}]


def judge_item(item: dict[str, Any], judge: BuiltinJudge | None = None) -> Verdicts:
    """Stage 1 in both path contexts, then the Ceiling when Stage 1 passes somewhere."""
    critical = item_request(item, downstream=_downstream(True))
    lenient = item_request(item, downstream=_downstream(False))
    on_path, off_path = run_stage1(critical), run_stage1(lenient)
    low: tuple[str, ...] = ()
    if off_path.stage1.passed:
        low = ceiling_low(lenient, off_path, judge or BuiltinJudge())
    wall = off_path.stage1.wall
    return Verdicts(
        floor_passed=off_path.stage1.floor.passed,
        wall_grade=wall.grade,
        passed_critical=on_path.stage1.passed,
        passed_noncritical=off_path.stage1.passed,
        ceiling_low=low,
        floor_codes=tuple(v.code for v in off_path.stage1.floor.violations),
        wall_codes=tuple(i.code for i in wall.issues),
    )


def ceiling_low(
    request: ReviewRequest, report: Stage1Report, judge: BuiltinJudge
) -> tuple[str, ...]:
    """The Ceiling dimensions a Stage 2 review scores below the flag threshold."""
    stage2 = run_ceiling(request, report, model_ceiling_judge(judge))
    low = []
    for dimension in CEILING_DIMENSIONS:
        score = getattr(stage2.quality, dimension.value)
        if score.value is not None and score.value < CEILING_FLAG_BELOW:
            low.append(dimension.value)
    return tuple(low)
