"""Feedback in the seed's JSON shape: issues with field/issue/fix, strengths, guidance."""

from __future__ import annotations

import json

from schemas.quality import DimensionScore
from schemas.result import Violation
from schemas.stages import ViolationCode
from workers.evaluate.stage1 import run_stage1
from workers.evaluate.verdict.feedback import MAX_ISSUES, synthesize_feedback

from .builders import BROKEN_FLASK, CLEAN_TEXT, request

DEFECTIVE = CLEAN_TEXT + " Caching halves latency [3]. Studies show this always works."


def test_feedback_has_exactly_the_seeds_json_shape() -> None:
    report = run_stage1(request(output={"kind": "text", "content": DEFECTIVE}))
    feedback = synthesize_feedback(
        overall_score=0.65,
        quality=report.quality,
        violations=(),
        issues=report.stage1.wall.issues,
    )
    wire = json.loads(feedback.model_dump_json())
    assert set(wire) == {
        "overall_score",
        "specific_issues",
        "strengths_to_preserve",
        "iteration_guidance",
    }
    assert wire["overall_score"] == 0.65
    assert wire["specific_issues"]
    for item in wire["specific_issues"]:
        assert set(item) == {"field", "issue", "fix"}
        assert all(isinstance(v, str) and v for v in item.values())
    assert {i["field"] for i in wire["specific_issues"]} == {"citations", "claims"}
    assert any("[3]" in i["issue"] for i in wire["specific_issues"])
    assert isinstance(wire["iteration_guidance"], str) and wire["iteration_guidance"]


def test_strengths_to_preserve_name_the_dimensions_that_scored_well() -> None:
    report = run_stage1(request(output={"kind": "text", "content": DEFECTIVE}))
    feedback = synthesize_feedback(
        overall_score=0.65,
        quality=report.quality,
        violations=(),
        issues=report.stage1.wall.issues,
    )
    names = [s.split(":")[0] for s in feedback.strengths_to_preserve]
    assert names == ["structure", "substance", "consistency"]
    assert "Do not rewrite what already works" in feedback.iteration_guidance


def test_floor_violations_become_issues_with_a_parse_fix() -> None:
    report = run_stage1(request(output={"kind": "python", "content": BROKEN_FLASK}))
    feedback = synthesize_feedback(
        overall_score=0.0,
        quality=report.quality,
        violations=report.stage1.floor.violations,
        issues=(),
    )
    issues = feedback.specific_issues
    assert [i.field for i in issues][1] == "structure"
    assert issues[0].field.startswith("line ")
    assert "SyntaxError" in issues[0].fix
    assert feedback.strengths_to_preserve == ()


def test_weak_ceiling_dimensions_are_fed_back_weakest_first() -> None:
    report = run_stage1(request())
    quality = report.quality.model_copy(
        update={
            "correctness": DimensionScore.scored(0.7, "off-by-one in pagination"),
            "completeness": DimensionScore.scored(0.4, "only 2 of 5 recommendations"),
            "clarity": DimensionScore.scored(0.9, "clear structure"),
        }
    )
    feedback = synthesize_feedback(overall_score=0.4, quality=quality, violations=(), issues=())
    assert [i.field for i in feedback.specific_issues] == ["completeness", "correctness"]
    assert "only 2 of 5" in feedback.specific_issues[0].fix
    assert "clarity: clear structure" in feedback.strengths_to_preserve


def test_issue_list_is_bounded() -> None:
    report = run_stage1(request())
    violations = [
        Violation(code=ViolationCode.MISSING_FIELD, message=f"f{i}", field=f"f{i}")
        for i in range(15)
    ]
    feedback = synthesize_feedback(
        overall_score=0.5, quality=report.quality, violations=violations, issues=()
    )
    assert len(feedback.specific_issues) == MAX_ISSUES
    assert feedback.specific_issues[0].fix == "Add f0"
    assert "15 issue(s)" in feedback.iteration_guidance
