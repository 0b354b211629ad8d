"""`ReviewRequest.sources` and `JudgeTask.sources`: shape, bounds and unique ids."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from schemas.judging import JudgeTask, JudgeTier
from schemas.quality import Dimension
from schemas.request import MAX_SOURCE_CHARS, MAX_SOURCES, ReviewRequest, Source

from .evaluate.builders import obj, output


def _decode(value: dict[str, object]) -> ReviewRequest:
    return ReviewRequest.model_validate_json(json.dumps(value))


def test_sources_default_to_none_given() -> None:
    assert _decode(obj()).sources == ()


def test_a_source_carries_id_text_and_optional_title_and_url() -> None:
    request = _decode(
        obj(sources=[{"id": "doc-1", "text": "Founded in 1998.", "url": "https://a.example/x"}])
    )
    (source,) = request.sources
    assert (source.id, source.text, source.title, source.url) == (
        "doc-1",
        "Founded in 1998.",
        None,
        "https://a.example/x",
    )


def test_duplicate_source_ids_are_rejected_naming_the_field() -> None:
    with pytest.raises(ValidationError, match="sources") as caught:
        _decode(obj(sources=[{"id": "a", "text": "one"}, {"id": "a", "text": "two"}]))
    assert "occurs more than once" in str(caught.value)


@pytest.mark.parametrize(
    "sources",
    [
        [{"id": f"s{i}", "text": "x"} for i in range(MAX_SOURCES + 1)],
        [{"id": "big", "text": "x" * (MAX_SOURCE_CHARS + 1)}],
        [{"id": "", "text": "x"}],
        [{"id": "a", "text": "x", "author": "someone"}],
    ],
)
def test_out_of_bounds_or_unknown_source_fields_are_rejected(sources: object) -> None:
    with pytest.raises(ValidationError, match="sources"):
        _decode(obj(sources=sources))


def test_judge_task_carries_sources() -> None:
    task = JudgeTask(
        tier=JudgeTier.CEILING,
        dimensions=(Dimension.GROUNDING,),
        output=output("text", "It was founded in 1998."),
        sources=(Source(id="a", text="Founded in 1998."),),
    )
    assert task.sources[0].id == "a"
