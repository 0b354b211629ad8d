"""Reading a verdict out of a Messages API reply: the tool call, else JSON in the text.

The hosted API answers a forced tool call with a ``tool_use`` block. Self-hosted servers
may ignore ``tool_choice``, lack tool use, or have been sent no tools: their model writes
the verdict as text, often inside a code fence, after a preamble or a ``<think>`` block,
sometimes wrapped the way it would call a tool (``{"name": ..., "arguments": {...}}``).
Whatever the form, the verdict is validated against the one score schema; what does not
validate raises ``JudgeOutputError`` saying why, for the repair turn to quote.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from anthropic.types import Message
from pydantic import TypeAdapter, ValidationError

from schemas.claims import MAX_CLAIMS, ClaimVerdict
from schemas.judging import DimensionVerdict, ReplyForm
from schemas.quality import Dimension
from workers.errors import JudgeOutputError
from workers.evaluate.thresholds import JUSTIFY_ABOVE
from workers.judges import prompt
from workers.judges.asking import CLAIMS_KEY

_SCORES = TypeAdapter(dict[Dimension, DimensionVerdict])
_CLAIMS = TypeAdapter(list[ClaimVerdict])
_DECODER = json.JSONDecoder()

#: Keys under which a model that writes its tool call as text puts the tool's input.
WRAPPERS = ("input", "arguments", "parameters", "scores", prompt.TOOL_NAME)
#: Most ``{`` a text is scanned from: a reply is short, a hostile one is not our problem.
MAX_OPENINGS = 200

Scores = dict[Dimension, DimensionVerdict]


@dataclass(frozen=True, slots=True)
class Reading:
    """A reply's verdict: the scores, the claims (empty when omitted), where it was found."""

    scores: Scores
    claims: tuple[ClaimVerdict, ...]
    form: ReplyForm


def read_verdict(reply: Message, dimensions: Sequence[Dimension]) -> tuple[Scores, ReplyForm]:
    """The scores in ``reply`` and where they were found (``read_reply`` without claims)."""
    reading = read_reply(reply, dimensions)
    return reading.scores, reading.form


def read_reply(reply: Message, dimensions: Sequence[Dimension]) -> Reading:
    """The verdict in ``reply``: its ``record_scores`` call, else a JSON object in its text.

    The optional ``claims`` list is validated with the scores, in both forms.

    Raises:
        JudgeOutputError: no tool call and no JSON object in the text, or what was found
            does not validate; the message says what is wrong, for the repair turn.
    """
    calls = [b for b in reply.content if b.type == "tool_use" and b.name == prompt.TOOL_NAME]
    if calls:
        raw = calls[0].input
        where = "tool input"
        return Reading(validated(raw, dimensions, where), claims_of(raw, where), ReplyForm.TOOL)
    text = "".join(b.text for b in reply.content if b.type == "text")
    found, broken = json_object(text, dimensions), first_parse_error(text)
    cut = " (the reply was cut at max_tokens)" if reply.stop_reason == "max_tokens" else ""
    wanted = {d.value for d in dimensions}
    if broken is not None and (found is None or not wanted & set(found)):
        raise JudgeOutputError(f"the JSON object in the reply's text does not parse{cut}: {broken}")
    if found is None:
        shown = prompt.describe(text.strip()) if text.strip() else "no text"
        raise JudgeOutputError(
            f"no {prompt.TOOL_NAME} tool call in the reply (stop_reason {reply.stop_reason}) "
            f"and no JSON object in its text ({shown})"
        )
    where = f"JSON in the text{cut}"
    return Reading(validated(found, dimensions, where), claims_of(found, where), ReplyForm.TEXT)


def validated(raw: object, dimensions: Sequence[Dimension], where: str) -> Scores:
    """``raw`` checked against the score schema.

    Exactly ``dimensions`` as keys (and optionally ``claims``, checked by ``claims_of``),
    each scored 0..1, every score above ``JUSTIFY_ABOVE`` justified.

    Raises:
        JudgeOutputError: what is wrong, naming the offending keys and fields.
    """
    wanted = {d.value for d in dimensions}
    if not isinstance(raw, Mapping) or set(raw) - {CLAIMS_KEY} != wanted:
        got = sorted(map(str, raw)) if isinstance(raw, Mapping) else type(raw).__name__
        raise JudgeOutputError(
            f"{where} must have exactly the keys {[d.value for d in dimensions]}, got {got}"
        )
    try:
        scores = _SCORES.validate_python({k: v for k, v in raw.items() if k != CLAIMS_KEY})
    except ValidationError as exc:
        detail = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:5])
        raise JudgeOutputError(f"invalid {where} {prompt.describe(raw)}: {detail}") from None
    stamped = [
        d.value
        for d, v in scores.items()
        if v.score > JUSTIFY_ABOVE and not v.justification.strip()
    ]
    if stamped:
        raise JudgeOutputError(
            f"scores above {JUSTIFY_ABOVE} need a justification: {', '.join(stamped)}"
        )
    return scores


def claims_of(raw: Mapping[str, Any], where: str) -> tuple[ClaimVerdict, ...]:
    """The verdict's ``claims``, validated: empty when absent or null, cut at ``MAX_CLAIMS``.

    Raises:
        JudgeOutputError: ``claims`` is not a list of ``{claim, support, span, source}``.
    """
    listed = raw.get(CLAIMS_KEY)
    if listed is None:
        return ()
    if not isinstance(listed, list):
        raise JudgeOutputError(
            f"{where}: {CLAIMS_KEY} must be a list of claims, got {type(listed).__name__}"
        )
    try:
        return tuple(_CLAIMS.validate_python(listed[:MAX_CLAIMS]))
    except ValidationError as exc:
        detail = "; ".join(
            f"{CLAIMS_KEY}.{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:5]
        )
        raise JudgeOutputError(f"invalid {where}: {detail}") from None


def json_object(text: str, dimensions: Sequence[Dimension]) -> Mapping[str, Any] | None:
    """The JSON object in ``text`` most likely to be the verdict, unwrapped; None if none.

    Every object that starts at a ``{`` is a candidate (fences, preambles and trailing
    prose fall away); the first one that has the most of ``dimensions`` as keys wins, so
    that a stray ``{}`` in a preamble does not hide the verdict after it. An object with
    none of them is still returned, so the repair turn can say which keys were wrong.
    """
    wanted = {d.value for d in dimensions}
    best: Mapping[str, Any] | None = None
    best_hits = -1
    for candidate in _objects(text):
        unwrapped = unwrap(candidate, wanted)
        hits = len(wanted & set(unwrapped))
        if hits > best_hits:
            best, best_hits = unwrapped, hits
        if hits == len(wanted):
            break
    return best


def unwrap(found: Mapping[str, Any], wanted: set[str]) -> Mapping[str, Any]:
    """The scores inside a tool call written as text (``{"name", "arguments"}``).

    ``found`` itself when its own keys are the dimensions, or when nothing wraps them.
    """
    if wanted & set(found):
        return found
    for key in WRAPPERS:
        inner = found.get(key)
        if isinstance(inner, str):  # OpenAI-style arguments: a JSON string
            try:
                inner = json.loads(inner)
            except ValueError:
                continue
        if isinstance(inner, Mapping) and wanted & set(inner):
            return inner
    return found


def first_parse_error(text: str) -> str | None:
    """Why the first ``{`` of ``text`` does not start a JSON value, or None if it does."""
    start = text.find("{")
    if start < 0:
        return None
    try:
        _DECODER.raw_decode(text, start)
    except json.JSONDecodeError as exc:
        return f"{exc.msg} at character {exc.pos - start} of the object"
    return None


def _objects(text: str) -> Iterator[Mapping[str, Any]]:
    """Each JSON object that starts at a ``{`` of ``text``, in order, nested ones skipped."""
    start, openings, end = text.find("{"), 0, 0
    while start >= 0 and openings < MAX_OPENINGS:
        openings += 1
        try:
            value, end = _DECODER.raw_decode(text, start)
        except ValueError:
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            yield value
        start = text.find("{", end)
