"""Reading a verdict out of a reply's text: the forms self-hosted models write it in."""

from __future__ import annotations

import json
from typing import Any

import pytest
from anthropic.types import Message

from schemas.judging import ReplyForm
from schemas.quality import Dimension
from workers.errors import JudgeOutputError
from workers.judges.reply import json_object, read_verdict

DIMS = (Dimension.CORRECTNESS, Dimension.CLARITY)
SCORES = {
    "correctness": {"score": 0.7, "justification": "adds two ints"},
    "clarity": {"score": 0.6, "justification": "short and named"},
}


def message(*blocks: dict[str, Any], stop_reason: str = "end_turn") -> Message:
    return Message.model_validate(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "local",
            "content": list(blocks),
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }
    )


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


@pytest.mark.parametrize(
    "reply",
    [
        json.dumps(SCORES),
        f"Here is my review.\n```json\n{json.dumps(SCORES, indent=2)}\n```\nThanks.",
        f"<think>weigh {{both}} dimensions {{}}</think>\n{json.dumps(SCORES)}",
        "Note: {} is empty.\n" + json.dumps(SCORES),
        json.dumps({"name": "record_scores", "arguments": json.dumps(SCORES)}),
        json.dumps({"name": "record_scores", "input": SCORES}),
        json.dumps({"record_scores": SCORES}),
    ],
    ids=["bare", "fenced", "think", "stray-object-first", "openai-call", "tool-call", "keyed"],
)
def test_a_verdict_written_as_text_is_found_and_validated(reply: str) -> None:
    scores, form = read_verdict(message(text(reply)), DIMS)
    assert form is ReplyForm.TEXT
    assert scores[Dimension.CORRECTNESS].score == 0.7
    assert scores[Dimension.CLARITY].justification == "short and named"


def test_a_tool_call_wins_over_text() -> None:
    other = {k: {**v, "score": 0.1} for k, v in SCORES.items()}
    reply = message(
        text(json.dumps(other)),
        {"type": "tool_use", "id": "toolu_1", "name": "record_scores", "input": SCORES},
    )
    scores, form = read_verdict(reply, DIMS)
    assert form is ReplyForm.TOOL and scores[Dimension.CORRECTNESS].score == 0.7


@pytest.mark.parametrize(
    ("reply", "says"),
    [
        ("Looks fine to me.", "no record_scores tool call in the reply"),
        ("", "no JSON object in its text (no text)"),
        ('{"correctness": {"score": 0.5, "justif', "does not parse: Unterminated string"),
        ('{"verdict": "good"}', "must have exactly the keys ['correctness', 'clarity']"),
        (
            json.dumps({**SCORES, "clarity": {"score": 1.7, "justification": "x"}}),
            "clarity.score: Input should be less than or equal to 1",
        ),
        (
            json.dumps({**SCORES, "clarity": {"score": 0.95, "justification": " "}}),
            "need a justification: clarity",
        ),
        (json.dumps({**SCORES, "clarity": {"score": "high"}}), "clarity.score"),
    ],
    ids=["prose", "empty", "truncated", "wrong-keys", "out-of-range", "stamp", "not-a-number"],
)
def test_what_does_not_validate_says_why(reply: str, says: str) -> None:
    with pytest.raises(JudgeOutputError) as raised:
        read_verdict(message(text(reply)), DIMS)
    assert says in str(raised.value)


def test_a_reply_cut_at_max_tokens_says_so() -> None:
    cut = message(text('{"correctness": {"score": 0.5}}'), stop_reason="max_tokens")
    with pytest.raises(JudgeOutputError, match="cut at max_tokens"):
        read_verdict(cut, DIMS)


def test_the_object_with_most_dimensions_is_picked_and_scanning_is_bounded() -> None:
    partial = json.dumps({"correctness": SCORES["correctness"]})
    assert json_object(f"{partial} then {json.dumps(SCORES)}", DIMS) == SCORES
    assert json_object("{" * 10_000, DIMS) is None
