"""Which grounding policy an output is held to: the one declared, or the one its task implies.

A user who does not know to declare a policy must still get a gate that fits the node: a
chat reply is not an extraction, and a summary is not a quotation. Without a declared
``grounding`` the policy is read from what the node was asked (its ask, the material cut
away): a dialogue turn or a request for an opinion is ``open``; a request to summarise,
rewrite or explain is ``abstractive``; a factual question answered from given material is
``extractive``; anything else keeps the default, ``abstractive``. The result says which
policy was used and why. An inferred policy is a guess, so what it alone makes a defect
stays suspect (``certainty``); a declared one is the node's contract.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from schemas.request import GroundingPolicy, Source
from schemas.stages import GroundingUse
from workers.evaluate.findings import sentences
from workers.evaluate.wall.grounding.task_parts import TaskParts, speaker_turns, split_task

DECLARED = "declared by the request"
DEFAULT = "no cue in the task: abstractive, the default"

_REWORD = re.compile(
    r"\b(?:summari[sz]\w*|summary|tl;?dr|condense|paraphras\w*|rewrit\w*|re-?word\w*|"
    r"rephras\w*|simplif\w*|shorten\w*|translat\w*|outline|recap\w*|key points|main points|"
    r"highlights)\b",
    re.I,
)
#: Words that deny the cue right after them: "return the content, not a summary".
_DENIED = re.compile(
    r"\b(?:not|no|never|without|instead of|rather than)\b(?:\W+\w+){0,2}\W*$", re.I
)
_OPINION = re.compile(
    r"\b(?:recommend\w*|suggest\w*|what do you think|do you (?:like|know|enjoy|prefer)|"
    r"have you (?:seen|read|heard)|would you|your (?:opinion|view|favou?rite)|brainstorm\w*)\b",
    re.I,
)
_WH = r"(?:^|(?<=[.?!:\n])|(?<=^\W))\s*(?:\W{0,3}\s*)"
_EXPLAIN = re.compile(
    _WH + r"(?:why|how(?! (?:many|much|old|long|far|often|tall|big))|explain|describe|discuss|"
    r"compare|what (?:are|were) the (?:reasons|causes|effects|differences))\b",
    re.I | re.M,
)
_FACTOID = re.compile(
    _WH + r"(?:which|who|whom|whose|what|when|where|how (?:many|much|old|long|far|often|tall|"
    r"big)|is|are|was|were|did|does|do|can|has|have|name)\b",
    re.I | re.M,
)


@dataclass(frozen=True, slots=True)
class NodeBrief:
    """What the node was asked and given, and the policy its output is held to."""

    parts: TaskParts
    """The task's ask and the material pasted into it."""
    sources: tuple[Source, ...]
    """The sources the request carried."""
    use: GroundingUse | None
    """The policy applied and why; null when there is no input to ground the output in."""


def read_brief(
    task: str | None, sources: Sequence[Source] = (), declared: GroundingPolicy | None = None
) -> NodeBrief:
    """Split the task, and choose the policy: the declared one, or the one the ask implies."""
    parts = split_task(task, sources)
    if not sources and not parts.material:
        return NodeBrief(parts, tuple(sources), None)
    if declared is not None:
        use = GroundingUse(policy=declared, declared=True, reason=DECLARED)
        return NodeBrief(parts, tuple(sources), use)
    policy, reason = infer_policy(parts.ask)
    use = GroundingUse(policy=policy, declared=False, reason=reason)
    return NodeBrief(parts, tuple(sources), use)


def infer_policy(ask: str | None) -> tuple[GroundingPolicy, str]:
    """The policy an ask implies, with the cue that decided it.

    What the node is asked outranks how a template tells it to answer: a dialogue, a
    request to reword, and then the question itself decide before any standing
    instruction does ("Who founded it? Explain your reasoning." asks a factual question).
    """
    if not ask:
        return GroundingPolicy.ABSTRACTIVE, DEFAULT
    turns = speaker_turns(ask)
    if turns >= 2:
        return GroundingPolicy.OPEN, f"the task is a dialogue turn ({turns} speaker turns)"
    if match := _unnegated(_REWORD, ask):
        return GroundingPolicy.ABSTRACTIVE, _cue("asks to reword its input", match)
    if turns == 1:
        return GroundingPolicy.OPEN, "the task is a chat turn (one speaker's turn)"
    questions = " ".join(s for s in sentences(ask) if s.rstrip().endswith("?"))
    return _by_cue(questions) or _by_cue(ask) or (GroundingPolicy.ABSTRACTIVE, DEFAULT)


def _by_cue(text: str) -> tuple[GroundingPolicy, str] | None:
    """The policy the first cue found in ``text`` implies: opinion, explanation, fact."""
    if not text:
        return None
    if match := _OPINION.search(text):
        return GroundingPolicy.OPEN, _cue("asks for an opinion or a suggestion", match)
    if match := _EXPLAIN.search(text):
        return GroundingPolicy.ABSTRACTIVE, _cue("asks for an explanation", match)
    if match := _FACTOID.search(text):
        return GroundingPolicy.EXTRACTIVE, _cue("asks a factual question", match)
    if "?" in text:
        return GroundingPolicy.EXTRACTIVE, "the task asks a question ('?')"
    return None


def _unnegated(cue: re.Pattern[str], text: str) -> re.Match[str] | None:
    """The first match of ``cue`` not denied just before it ("not a summary")."""
    for match in cue.finditer(text):
        if not _DENIED.search(text[max(0, match.start() - 30) : match.start()]):
            return match
    return None


def _cue(what: str, match: re.Match[str]) -> str:
    word = match.group(0).strip(" \n\t:.?!\"'[]()*#")[:40]
    return f"the task {what} ({word!r})"
