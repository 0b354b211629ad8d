"""A task's two parts: what the node was asked, and the material it was given to work on.

Prompts carry their input inline as often as beside them: "Summarize the document.
Document: ...", a ``<context>`` block, "Summarize the following article: ...". Pasted
material is input, exactly as a source is: an output is grounded in it, and never has to
cover or repeat it. Only the ask (the instruction, the question, the dialogue so far) is
what an answer may echo without adding anything, and what says which grounding policy
fits. Splitting here is what makes a verdict the same whether the input sits in ``task``,
in ``sources`` or in both; material that repeats a given source is dropped, since the
source already holds it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from schemas.request import Source
from workers.evaluate.wall.grounding.lexicon import squash

#: Labels that introduce material to work on (``Document:``, ``### Context``, ``<article>``).
MATERIAL_LABELS = frozenset(
    """
    abstract article background content context data document email evidence excerpt
    fact information input knowledge note paper passage reference report result
    retrieved source story text transcript
    """.split()
)
#: Labels of the ask: they end a material block; what they label stays in the ask.
ASK_LABELS = frozenset(
    """
    answer assistant chat conversation dialog dialogue format history human instruction
    output prompt query question reply request response summary system task user
    """.split()
)
#: ``Label:``, ``**Label:**`` or ``## Label`` opening a line, the rest of it starting the block.
_LABEL = re.compile(
    r"^[ \t]*(?:(?:#{1,6}[ \t]*)?\**(?P<label>[A-Za-z][A-Za-z ]{0,30}?)\**[ \t]*:\**"
    r"|#{1,6}[ \t]*(?P<heading>[A-Za-z][A-Za-z ]{0,30}?)[ \t]*$)[ \t]*",
    re.M,
)
_TAG = re.compile(r"<(?P<tag>[A-Za-z_]{2,20})>(?P<body>.*?)</(?P=tag)>", re.S)
_FENCE = re.compile(
    r"^(?:```|\"\"\"|''')[^\n]*\n(?P<body>.*?)\n(?:```|\"\"\"|''')[ \t]*$", re.S | re.M
)
#: "... the following article:", "... the text below:": what follows the colon is material.
_FOLLOWING = re.compile(r"\b(?:following|below)\b[^.?!:\n]{0,40}:[ \t]*", re.I)
#: A speaker's turn: ``[Human]:``, ``User:``, ``Assistant:``, ``Q:``.
_TURN = re.compile(
    r"(?:^|\s)\[?(?:human|user|assistant|ai|bot|agent|customer|system|speaker ?\d|person ?\d"
    r"|[qa])\]?:",
    re.I,
)
#: Words unlabelled text after "the following ...:" needs before it counts as material.
MIN_MATERIAL_WORDS = 25


@dataclass(frozen=True, slots=True)
class TaskParts:
    """A task split into its ask and its material."""

    ask: str | None
    """The instruction, question or dialogue: null when the task held only material."""
    material: tuple[str, ...]
    """Passages pasted into the task that no given source already holds."""
    pasted: bool
    """Whether the task held any material (a copy of a source included)."""


def split_task(task: str | None, sources: Sequence[Source] = ()) -> TaskParts:
    """The ask and the material of ``task``; material a source already holds is dropped."""
    if not task or not task.strip():
        return TaskParts(None, (), False)
    blocks: list[str] = []
    ask = _cut_following(_cut_labelled(_cut_marked(task, blocks), blocks), blocks).strip()
    given = [squash(s.text) for s in sources]
    material = tuple(b for b in blocks if not any(_holds(g, b) for g in given))
    return TaskParts(ask or None, material, bool(blocks))


def task_for_judge(task: str | None, sources: Sequence[Source] = ()) -> str | None:
    """The task as a judge should read it: material a given source holds appears once.

    "Summarize the document. Document: <article>" sent with the article as a source
    would put the article in the judge's prompt twice, and price the review by that:
    the ask and any material no source holds are kept, copies are left to the sources.
    """
    parts = split_task(task, sources)
    if not task or not parts.pasted or not sources:
        return task
    kept = [text for text in (parts.ask, *parts.material) if text]
    return "\n\n".join(kept) or None


def speaker_turns(text: str) -> int:
    """How many speakers' turns ``text`` holds (a dialogue has two or more)."""
    return len(_TURN.findall(text))


def _cut_marked(text: str, blocks: list[str]) -> str:
    """Material in a tag named as material (``<document>``) or in a fenced block."""
    take = _taker(blocks)
    text = _TAG.sub(lambda m: take(m) if _is_material(m.group("tag")) else m.group(0), text)
    return _FENCE.sub(take, text)


def _taker(blocks: list[str]) -> Callable[[re.Match[str]], str]:
    def take(match: re.Match[str]) -> str:
        body = match.group("body").strip()
        if not body:
            return match.group(0)
        blocks.append(body)
        return "\n"

    return take


def _cut_labelled(text: str, blocks: list[str]) -> str:
    """Every block a material label opens, up to the next known label."""
    labels = [m for m in _LABEL.finditer(text) if _known(_label_of(m))]
    if not labels:
        return text
    kept = [text[: labels[0].start()]]
    for i, match in enumerate(labels):
        end = labels[i + 1].start() if i + 1 < len(labels) else len(text)
        body = text[match.end() : end].strip()
        if _is_material(_label_of(match)) and body and speaker_turns(body) < 2:
            blocks.append(body)
        else:
            # "Question: Who ...?" asks "Who ...?": the label is layout, not words the
            # node was given, so the ask reads the same as the question sent alone.
            kept.append(text[match.end() : end])
    return "\n".join(k.strip("\n") for k in kept)


def _cut_following(text: str, blocks: list[str]) -> str:
    """Unlabelled material announced by "the following ...:" or "... below:"."""
    match = _FOLLOWING.search(text)
    if match is None:
        return text
    rest = text[match.end() :].strip()
    if len(rest.split()) < MIN_MATERIAL_WORDS or speaker_turns(rest) >= 2:
        return text
    blocks.append(rest)
    return text[: match.end()]


def _label_of(match: re.Match[str]) -> str:
    return (match.group("label") or match.group("heading") or "").strip().lower()


def _stem(word: str) -> str:
    return word.removesuffix("s") if len(word) > 3 else word


def _known(label: str) -> bool:
    words = label.split()
    return 0 < len(words) <= 3 and any(_stem(w) in MATERIAL_LABELS | ASK_LABELS for w in words)


def _is_material(label: str) -> bool:
    words = label.lower().split()
    return bool(words) and _stem(words[-1]) in MATERIAL_LABELS


def _holds(source: str, block: str) -> bool:
    """Whether a source already holds a block: the folded text of one occurs in the other."""
    folded = squash(block)
    return bool(folded) and (folded in source or source in folded)
