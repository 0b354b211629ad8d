"""How the judge asks for its answer: by the tool call, or as a JSON object in the text.

The hosted API is told to call the tool, and is forced to. A server that only takes an
offered tool is also told what to write if it cannot call it; a server sent no tools is
told the JSON object's exact shape. The repair turn says the same, after the error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from schemas.claims import MAX_CLAIMS, ClaimSupport
from schemas.judging import JudgeTask, JudgeTier
from schemas.quality import Dimension
from workers.endpoint import ToolUse
from workers.evaluate.wall.grounding.task_parts import split_task

TOOL_NAME = "record_scores"
"""The one tool the judge must call; its input is the verdict."""
CLAIMS_KEY = "claims"
"""The verdict's optional list of per-claim grounding, beside the dimensions."""
CLAIMS_SHAPE = (
    f'"{CLAIMS_KEY}": a list of {{"claim": the claim as the output states it, "support": '
    '"supported" or "contradicted" or "not_in_sources", "span": the source\'s exact words, '
    '"source": the source\'s id}, one per name, number, date, quotation and fact'
)

#: The tool's optional ``claims`` list: each claim once, with its support and span.
CLAIMS_TOOL_PROPERTY: dict[str, Any] = {
    "type": "array",
    "maxItems": MAX_CLAIMS,
    "description": "Each checkable claim of the output once, with its support in the sources.",
    "items": {
        "type": "object",
        "properties": {
            "claim": {"type": "string", "description": "the claim, as the output states it"},
            "support": {"type": "string", "enum": [s.value for s in ClaimSupport]},
            "span": {
                "type": "string",
                "description": "the source's exact words that support or contradict it; "
                "empty when not in the sources",
            },
            "source": {"type": "string", "description": "the id of the source of the span"},
        },
        "required": ["claim", "support"],
        "additionalProperties": False,
    },
}


def wants_claims(task: JudgeTask) -> bool:
    """Whether to ask for per-claim grounding: a Ceiling task with input to ground in."""
    if task.tier is not JudgeTier.CEILING:
        return False
    return bool(task.sources) or bool(split_task(task.task, task.sources).material)


def json_shape(dimensions: Sequence[Dimension], *, claims: bool = False) -> str:
    """The JSON object a reply without a tool call must be, spelled out for the model."""
    keys = ", ".join(f'"{d.value}"' for d in dimensions)
    example = ", ".join(
        f'"{d.value}": {{"score": 0.0, "justification": "..."}}' for d in dimensions[:2]
    )
    more = ", ..." if len(dimensions) > 2 else ""
    shape = (
        f"one JSON object with exactly the keys {keys}; each value is an object "
        '{"score": a number from 0 to 1, "justification": concrete evidence}, '
        f"for example {{{example}{more}}}"
    )
    return f"{shape}; add the key {CLAIMS_SHAPE}" if claims else shape


def answer_line(task: JudgeTask, tool_use: ToolUse) -> str:
    """The request's last line: how to answer, by tool call or by JSON text."""
    pairwise = task.tier is JudgeTier.PAIRWISE
    what = (
        "for each dimension, the probability that A is better"
        if pairwise
        else "a score and justification for each dimension"
    )
    claims = wants_claims(task)
    if claims:
        what += ", and the output's claims with their support in the sources"
    if tool_use is ToolUse.FORCED:
        if pairwise:
            return f"Call {TOOL_NAME}: for each dimension, the probability that A is better."
        return f"Call {TOOL_NAME} with {what}."
    shape = json_shape(task.dimensions, claims=claims)
    if tool_use is ToolUse.OFFERED:
        return (
            f"Call {TOOL_NAME} with {what}. If you cannot call tools, reply with only "
            f"its input instead: {shape}."
        )
    return f"Reply with {what} as {shape}. Write nothing before or after the JSON object."


def repair_note(error: str, tool_use: ToolUse = ToolUse.FORCED) -> str:
    """What the repair turn says: the validation error, and how to answer again."""
    wanted = "every requested dimension, a score between 0 and 1 and a specific justification."
    if tool_use is ToolUse.FORCED:
        again = f"Call {TOOL_NAME} again with"
    elif tool_use is ToolUse.OFFERED:
        again = f"Call {TOOL_NAME} again (or reply with only its JSON input) with"
    else:
        again = "Reply again with only the JSON object, nothing around it, with"
    return f"Your answer was rejected: {error}\n{again} {wanted}"
