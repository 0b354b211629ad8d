"""The economics bench's bound for routers that work from rates and Stage 1 evidence."""

from __future__ import annotations

from typing import Any

from bench.economics import Node
from bench.economics_learning import capped_waste, evidence_oracle, rate_oracle
from schemas.quality import Dimension
from schemas.result import FloorResult, Stage1Result, WallResult
from schemas.stages import IssueCode, WallIssue
from tests.evaluate.builders import request, skill


def _node(
    i: int,
    *,
    defective: bool,
    issues: int = 0,
    rate: float = 0.1,
    waste: float = 3.0,
    capped: float = 3.0,
    **flags: Any,
) -> Node:
    found = tuple(
        WallIssue(dimension=Dimension.GROUNDING, code=IssueCode.UNSUPPORTED_CLAIM, message="x")
        for _ in range(issues)
    )
    stage1 = Stage1Result(passed=True, floor=FloorResult(passed=True),
                          wall=WallResult(passed=True, grade=1.0, issues=found))  # fmt: skip
    return Node(defective=defective, stage1_passed=True, ceiling_flags=defective, escalate=False,
                decided=False, stage2_cost=1.0, waste=waste, capped_waste=capped, true_fail=rate,
                request=request(node_id=f"n{i}", skill=skill(0.9), flags=flags),
                stage1=stage1)  # fmt: skip


def test_the_bound_spends_its_share_and_takes_what_stage1_flagged_before_higher_rates() -> None:
    nodes = [
        _node(0, defective=True, issues=1, rate=0.05),  # Stage 1 saw it: certain
        *(_node(i, defective=False, rate=0.3) for i in range(1, 7)),  # risky on rates alone
        _node(7, defective=True, rate=0.3),
        _node(8, defective=False, rate=0.05, final_deliverable=True),  # a hard rule
        _node(9, defective=False, rate=0.01),
    ]
    chosen = evidence_oracle(nodes, 0.3)  # 3 of the 10 Stage 2 dollars
    assert sum(chosen) == 3 and chosen[0] and chosen[8]
    by_rate = rate_oracle(nodes, 0.3)
    assert not by_rate[0]  # rates alone rank the flagged node last but one


def test_held_to_the_seeds_cap_the_bound_ranks_on_the_waste_a_router_may_act_on() -> None:
    # Same rate, same evidence: only the waste differs, and the cap reverses the order.
    spoils_more = _node(0, defective=True, rate=0.3, waste=9.0, capped=1.5)
    costs_more = _node(1, defective=True, rate=0.3, waste=4.0, capped=2.0)
    filler = [_node(i, defective=False, rate=0.3, waste=1.0, capped=1.0) for i in range(2, 10)]
    nodes = [spoils_more, costs_more, *filler]
    uncapped = evidence_oracle(nodes, 0.1)  # one of the ten Stage 2 dollars
    capped = evidence_oracle(nodes, 0.1, waste=capped_waste)
    assert uncapped[:2] == [True, False]
    assert capped[:2] == [False, True]
