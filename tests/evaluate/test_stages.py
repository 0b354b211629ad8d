"""Stage functions: Floor short circuit, Wall vector, Ceiling merge, judge failure."""

from __future__ import annotations

import pytest

from schemas.judging import DimensionVerdict, JudgeTask, JudgeVerdict
from schemas.quality import CEILING_DIMENSIONS, Dimension, ScoreStatus
from schemas.request import OutputKind
from schemas.result import CeilingStatus, Decision, Stage2Result
from workers.errors import JudgeRetryableError
from workers.evaluate.ceiling.apply import apply_ceiling, length_penalty
from workers.evaluate.stage1 import run_stage1
from workers.review import review

from .builders import BROKEN_FLASK, CLEAN_TEXT, PRICE, request


class FailingJudge:
    def __init__(self) -> None:
        self.calls = 0

    def evaluate(self, task: JudgeTask) -> JudgeVerdict:
        self.calls += 1
        raise JudgeRetryableError("529 overloaded")


def _ceiling(scores: dict[Dimension, DimensionVerdict], content: str = CLEAN_TEXT) -> JudgeVerdict:
    return JudgeVerdict(model="double", scores=scores)


def _merge(
    verdict: JudgeVerdict, content: str = CLEAN_TEXT
) -> dict[Dimension, tuple[str, float | None]]:
    req = request(output={"kind": "text", "content": content})
    report = run_stage1(req)
    merged = apply_ceiling(
        req,
        report,
        verdict,
        review_ms=1.0,
        stage2=Stage2Result(status=CeilingStatus.SCORED, model="m"),
    )
    return {
        d: (merged.quality.get(d).status.value, merged.quality.get(d).value)
        for d in CEILING_DIMENSIONS
    }


def test_floor_failure_scores_structure_zero_and_leaves_everything_else_unscored() -> None:
    report = run_stage1(request(output={"kind": "python", "content": BROKEN_FLASK}))
    assert report.quality.structure.value == 0.0
    assert "SyntaxError" in report.quality.structure.justification
    assert report.quality.scored() == {Dimension.STRUCTURE: 0.0}


def test_clean_output_scores_floor_and_wall_and_leaves_the_ceiling_unscored() -> None:
    report = run_stage1(request())
    assert set(report.quality.scored()) == {
        Dimension.STRUCTURE,
        Dimension.SUBSTANCE,
        Dimension.CONSISTENCY,
        Dimension.GROUNDING,
    }
    for dimension in CEILING_DIMENSIONS:
        assert report.quality.get(dimension).status is ScoreStatus.UNSCORED


def test_wall_grade_is_capped_by_the_external_confidence() -> None:
    report = run_stage1(request(signals={"downstream": 0.2}))
    assert report.stage1.wall.grade == pytest.approx(0.2)
    assert report.stage1.wall.passed is False


def test_unjustified_score_above_0_8_is_capped_at_0_8() -> None:
    merged = _merge(
        _ceiling(
            {
                Dimension.CORRECTNESS: DimensionVerdict(score=0.97, justification=""),
                Dimension.COMPLETENESS: DimensionVerdict(score=0.97, justification="all five"),
                Dimension.CLARITY: DimensionVerdict(score=0.5, justification=""),
                Dimension.RELEVANCE: DimensionVerdict(score=0.81, justification="  "),
            }
        )
    )
    assert merged[Dimension.CORRECTNESS] == ("scored", 0.8)
    assert merged[Dimension.COMPLETENESS] == ("scored", 0.97)
    assert merged[Dimension.CLARITY] == ("scored", 0.5)
    assert merged[Dimension.RELEVANCE] == ("scored", 0.8)


def test_dimension_the_judge_left_out_is_indeterminate_not_zero() -> None:
    merged = _merge(
        _ceiling({Dimension.CORRECTNESS: DimensionVerdict(score=0.7, justification="x")})
    )
    assert merged[Dimension.CORRECTNESS] == ("scored", 0.7)
    assert merged[Dimension.CLARITY] == ("indeterminate", None)


@pytest.mark.parametrize(
    ("chars", "kind", "penalty"),
    [
        (6000, OutputKind.TEXT, 0.0),
        (12000, OutputKind.TEXT, 0.05),
        (24000, OutputKind.TEXT, 0.10),
        (6000 * 64, OutputKind.TEXT, 0.15),
        (8000, OutputKind.SQL, 0.05),
    ],
)
def test_length_penalty_is_005_a_doubling_capped_at_015(
    chars: int, kind: OutputKind, penalty: float
) -> None:
    assert length_penalty(chars, kind) == pytest.approx(penalty)


def test_judge_failure_makes_the_ceiling_indeterminate_and_sends_it_to_a_human() -> None:
    judge = FailingJudge()
    result = review(request(flags={"final_deliverable": True}), judge, stage2_price=PRICE)
    assert judge.calls == 1
    assert result.stage2 is not None
    assert result.stage2.status is CeilingStatus.INDETERMINATE
    assert result.stage2.error is not None and "529" in result.stage2.error
    for dimension in CEILING_DIMENSIONS:
        score = result.quality.get(dimension)
        assert (score.status, score.value) == (ScoreStatus.INDETERMINATE, None)
    assert result.decision is Decision.ESCALATE_HUMAN
