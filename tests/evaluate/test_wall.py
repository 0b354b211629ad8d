"""Wall: the grade is the weakest dimension, and partial grades depend on criticality."""

from __future__ import annotations

import pytest

from schemas.quality import Dimension
from schemas.result import WallResolution
from workers.evaluate.wall.scoring import (
    FAIL_GRADE,
    PASS_GRADE,
    resolve_wall,
    score_wall,
    wall_result,
)

from .builders import CLEAN_TEXT, output


def test_thresholds_are_the_seeds() -> None:
    assert (PASS_GRADE, FAIL_GRADE) == (0.6, 0.3)


@pytest.mark.parametrize(
    ("grade", "critical", "resolution"),
    [
        (1.0, True, WallResolution.PASS),
        (0.6, True, WallResolution.PASS),
        (0.6, False, WallResolution.PASS),
        (0.5999, True, WallResolution.FAIL),
        (0.5999, False, WallResolution.PASS_WITH_WARNING),
        (0.4, True, WallResolution.FAIL),
        (0.4, False, WallResolution.PASS_WITH_WARNING),
        (0.3, True, WallResolution.FAIL),
        (0.3, False, WallResolution.PASS_WITH_WARNING),
        (0.2999, False, WallResolution.FAIL),
        (0.2999, True, WallResolution.FAIL),
        (0.0, False, WallResolution.FAIL),
    ],
)
def test_partial_grade_is_resolved_by_threshold_and_criticality(
    grade: float, critical: bool, resolution: WallResolution
) -> None:
    assert resolve_wall(grade, feeds_critical_path=critical) is resolution
    result = wall_result(grade, (), feeds_critical_path=critical)
    assert result.resolution is resolution
    assert result.passed is (resolution is not WallResolution.FAIL)
    assert result.grade == pytest.approx(grade)


def test_clean_output_scores_full_marks_on_every_wall_dimension() -> None:
    scores = score_wall(output("text", CLEAN_TEXT))
    assert scores.scores == {
        Dimension.SUBSTANCE: 1.0,
        Dimension.CONSISTENCY: 1.0,
        Dimension.GROUNDING: 1.0,
    }
    assert scores.grade == 1.0
    assert scores.findings == ()


def test_grade_is_the_weakest_dimension_not_an_average() -> None:
    content = CLEAN_TEXT + " The cache is on by default. The cache is not on by default."
    scores = score_wall(output("text", content))
    assert scores.scores[Dimension.CONSISTENCY] == pytest.approx(0.55)
    assert scores.scores[Dimension.SUBSTANCE] == 1.0
    assert scores.grade == pytest.approx(0.55)
    assert [f.issue.code for f in scores.findings] == ["Contradiction"]


def test_findings_from_all_three_checks_are_kept_with_their_dimension() -> None:
    content = (
        "TODO: finish. Studies show this always works. The cache is on by default. "
        "The cache is not on by default. See [4]."
    )
    scores = score_wall(output("text", content))
    by_dimension = {f.issue.dimension for f in scores.findings}
    assert by_dimension == {Dimension.SUBSTANCE, Dimension.CONSISTENCY, Dimension.GROUNDING}
    assert all(v < 1.0 for v in scores.scores.values())
