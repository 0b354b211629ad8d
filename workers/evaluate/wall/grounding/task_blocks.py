"""A task cut into blocks by its layout: whatever sets text apart, whatever it is called.

Runtimes lay prompts out in many ways: a passage between tags of any name, in a fenced
or quoted block, under a ``Label:`` or a heading, between separator lines, in its own
paragraph, or as a string of a JSON payload. This module only cuts; which block is the
ask and which is material is read from each block's own shape (``task_parts``). A label,
heading, tag or key is kept beside the block it introduced, as a hint, never as the
block's text: it is layout, not words the node was given.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from workers.evaluate.wall.grounding.task_speech import SPEAKER

#: An opening tag at a line's start, any name, any attributes.
_OPEN = re.compile(r"^[ \t]*<(?P<tag>[A-Za-z][\w:.-]{0,40})(?:\s[^<>\n]*)?>", re.M)
#: A fenced block: backticks or tildes with an info string, or a docstring's quotes.
_FENCE = re.compile(
    r"^(?P<fence>```+|~~~+|\"\"\"|''')(?P<info>[^\n]*)\n(?P<body>.*?)\n[ \t]*(?P=fence)[ \t]*$",
    re.S | re.M,
)
#: A run of lines quoted with ``>`` (not a ``>>>`` console prompt).
_QUOTE = re.compile(r"(?:^[ \t]*>(?!>>)[^\n]*(?:\n|$))+", re.M)
#: ``Label: text`` or ``**Label:**`` opening a line; a label is at most four words.
_LABEL = re.compile(
    r"^[ \t]*[\[(*_\"`]{0,3}(?P<label>[A-Za-z][\w'’/&-]*(?:[ \t]+[\w'’/&-]+){0,3})"
    r"[\])*_\"`]{0,3}[ \t]*:(?:[ \t]+|$)(?P<body>.*)$"
)
_HEADING = re.compile(
    r"^[ \t]*(?:#{1,6}[ \t]+(?P<label>.+?)[ \t#]*|\*\*(?P<bold>[^*\n]{1,60})\*\*[ \t]*)$"
)
#: ``[name] text`` opening a line, a log's or a template's label (not a speaker's turn).
_BRACKETED = re.compile(r"^[ \t]*\[(?P<label>[A-Za-z][\w .-]{0,30})\][ \t]+(?P<body>\S.*)$")
#: A chat role alone on its line: the header of the message below it, not a turn's text.
_ROLE_LINE = re.compile(r"^[ \t]*(?:" + SPEAKER + r"|\[?(?:developer|model)\]?:)[ \t]*$", re.I)
#: A heading framed by rule characters (``=== Worked example ===``, ``--- Description ---``).
_FRAMED = re.compile(
    r"^[ \t]*(?P<rule>[=#*~-]{2,})[ \t]*(?P<label>[^=#*~\s-](?:[^\n]{0,78}[^=#*~\s-])?)"
    r"[ \t]*(?P=rule)[ \t]*$"
)
#: A bracketed label alone on its line (``[hits]``): a heading.
_BRACKET_LINE = re.compile(r"^[ \t]*\[[A-Za-z][\w .-]{0,30}\][ \t]*$")
#: A line of markup only (``<<END_TURN>>``, ``<div class="x">``, ``</div>``): layout, never
#: text; an opening one names what follows.
_MARKUP_LINE = re.compile(r"^[ \t]*(?:<{1,2}[^<>\n]{1,200}>{1,2}[ \t]*)+$")
#: A separator line; ``===`` or ``---`` under a line of text underlines it as a heading.
_RULE = re.compile(r"^[ \t]*([-=*_~+])\1{2,}[ \t]*$")
#: A speaker's turn opening a line: it continues a dialogue rather than starting a block.
_TURN_LINE = re.compile(r"^[ \t]*" + SPEAKER, re.I)
#: Placeholder of a container cut out of the text: the block's index, on a line of its own.
_HOLE = re.compile(r"^\x00(\d+)\x00$")
#: Words a heading has at most: a longer line over ``---`` is text before a separator.
MAX_HEADING_WORDS = 8
#: Strings of a JSON payload shorter than this are keys' values, not passages.
_MIN_JSON_TEXT = 3


@dataclass(frozen=True, slots=True)
class Block:
    """A piece of the task that its layout sets apart."""

    text: str
    label: str = ""
    """The label, heading, tag or key that introduced it, lower-cased; empty when none."""
    marked: bool = False
    """Whether a container set it apart: tags, a fence, a quote, a JSON string."""


def blocks_of(task: str) -> list[Block]:
    """The task's blocks in the order they are written.

    An empty block is kept only when a label names it: a slot left to fill ("Answer:").
    """
    payload = _json_blocks(task)
    if payload is not None:
        return payload
    held: list[Block] = []
    text = _cut_containers(task, held)
    return [b for b in _lines_to_blocks(text, held) if b.text.strip() or b.label]


def _json_blocks(task: str) -> list[Block] | None:
    """Every string of a task that is one JSON object or array, with its key as the label."""
    stripped = task.strip()
    if not stripped or stripped[0] not in "[{":
        return None
    try:
        value = json.loads(stripped)
    except ValueError:
        return None
    return [Block(text, key, marked=True) for key, text in _strings(value, "")]


def _strings(value: object, key: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        if len(value.strip()) >= _MIN_JSON_TEXT:
            yield key.lower().replace("_", " "), value.strip()
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, str(k))
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v, key)


def _cut_containers(text: str, held: list[Block]) -> str:
    """Tags (innermost first), fences and quotes, each replaced by a placeholder line."""

    def hole(block: Block) -> str:
        held.append(block)
        return f"\n\x00{len(held) - 1}\x00\n"

    text = _cut_tags(text, held, hole)
    text = _FENCE.sub(
        lambda m: hole(Block(_fenced_body(m), m.group("info").strip().lower(), True)), text
    )
    return _QUOTE.sub(lambda m: hole(Block(_unquote(m.group(0)), marked=True)), text)


def _cut_tags(text: str, held: list[Block], hole: Callable[[Block], str]) -> str:
    """Each tag opening a line, with its body up to its own closing tag (nesting counted).

    A tag that only wraps others leaves what is between them as a block of its own; a tag
    never closed is left in place (a line of markup, read as layout).
    """
    out, at = [], 0
    for opening in _OPEN.finditer(text):
        if opening.start() < at:
            continue  # inside a tag already cut
        name = opening.group("tag")
        closing = _closing(text, name, opening.end())
        if closing is None:
            continue
        body = text[opening.end() : closing[0]]
        out.append(text[at : opening.start()])
        if _OPEN.search(body):
            inner = _cut_tags(body, held, hole)
            rest = "\n".join(line for line in inner.splitlines() if not _HOLE.match(line.strip()))
            if rest.strip() and not _MARKUP_LINE.match(rest.strip()):
                out.append(hole(Block(rest.strip(), name.lower(), True)))
            out.append("\n".join(line for line in inner.splitlines() if _HOLE.match(line.strip())))
        else:
            out.append(hole(Block(body.strip(), name.lower(), marked=True)))
        at = closing[1]
    return "".join([*out, text[at:]])


def _closing(text: str, name: str, start: int) -> tuple[int, int] | None:
    """Where the tag ``name`` opened before ``start`` closes: (body end, tag end)."""
    depth = 1
    for match in re.finditer(rf"<(/?){re.escape(name)}(?=[\s>/])[^<>]*>", text[start:], re.I):
        depth += -1 if match.group(1) else 1
        if depth == 0:
            return start + match.start(), start + match.end()
    return None


def _fenced_body(match: re.Match[str]) -> str:
    if match.group("fence")[0] in "\"'":  # a docstring's first line is text, not a language
        return f"{match.group('info')}\n{match.group('body')}".strip()
    return match.group("body").strip()


def _unquote(quoted: str) -> str:
    return "\n".join(re.sub(r"^[ \t]*> ?", "", line) for line in quoted.splitlines()).strip()


def _lines_to_blocks(text: str, held: list[Block]) -> Iterator[Block]:
    """Paragraphs, split again where a label, heading, rule or dialogue starts a new block.

    A heading (or a line of markup) names the block after it; a label names the text
    after it on its line and the lines that follow. A speaker's turn (``User: ...``) is not
    a label: the turns of a dialogue stay one block, with their speakers.
    """
    rows = text.splitlines()
    label, lines = "", list[str]()
    for i, line in enumerate(rows):
        stripped = line.strip()
        hole = _HOLE.match(stripped)
        heading = _heading(line, rows[i + 1] if i + 1 < len(rows) else "", rows[i - 1] if i else "")
        turn = heading is None and _TURN_LINE.match(line) is not None
        labelled = None if turn or heading is not None else _labelled(line)
        joins_dialogue = turn and bool(lines) and _TURN_LINE.match(lines[0]) is not None
        ends = not stripped or hole or _RULE.match(line) or heading is not None or labelled
        if ends or (turn and not joins_dialogue):
            if lines:  # a heading or label that has named nothing yet waits for its text
                yield Block("\n".join(lines).strip(), label)
                label, lines = "", []
        if hole:
            yield held[int(hole.group(1))]
            label = ""
        elif heading is not None:
            label = heading
        elif labelled:
            label = labelled.group("label").lower()
            lines = [labelled.group("body")] if labelled.group("body").strip() else []
        elif stripped and not _RULE.match(line):
            lines.append(line)
            if stripped.endswith(":"):  # "Give a brief summary of the text below:" ends here
                yield Block("\n".join(lines).strip(), label)
                label, lines = "", []
    yield Block("\n".join(lines).strip(), label)


def _labelled(line: str) -> re.Match[str] | None:
    """``Label: text`` or ``[label] text``: a label and the text it names."""
    return _LABEL.match(line) or _BRACKETED.match(line)


def _heading(line: str, following: str, before: str = "") -> str | None:
    """A heading's text (markdown, bold, underlined, or a line of markup), else None.

    A line between two rules is framed text, and a sentence over a rule is text before a
    separator: neither is a heading. A closing tag ends a block and names nothing ("").
    """
    text = line.strip()
    if _ROLE_LINE.match(line):  # a chat template's message header ("user:" on its own)
        return text.rstrip(":").strip("[] \t").lower()
    framed = _FRAMED.match(line)
    if framed:
        return framed.group("label").strip().lower()
    if _BRACKET_LINE.match(line):
        return text.strip("[]").strip().lower()
    if _MARKUP_LINE.match(line) and not _HOLE.match(text):
        return "" if text.startswith("</") else re.sub(r"[<>]+", " ", text).strip().lower()
    atx = _HEADING.match(line)
    if atx:
        return (atx.group("label") or atx.group("bold")).strip().lower()
    rule = _RULE.match(following)
    if not rule or rule.group(1) not in "=-" or not text or _HOLE.match(text):
        return None
    if _RULE.match(before) or text.endswith((".", "!", "?")):
        return None
    return text.lower() if len(text.split()) <= MAX_HEADING_WORDS else None
