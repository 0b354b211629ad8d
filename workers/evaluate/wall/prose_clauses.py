"""Prose as the self-consistency checks read it: sections of plain sentences.

Code is not prose: fenced blocks, doctest sessions, reStructuredText literal blocks
(after ``::``) and table rows are dropped. An inline code span is one opaque word
(```/a```, ````max_size````), so a list of code items keeps its items and two spans stay
distinct. Headings (markdown ``#`` and underlined reStructuredText titles) and the
heads of definitions (a line whose next line is indented under it, as parameters are
described in docstrings) split a document into sections: a statement under one heading
and its opposite under another are about different cases, so the checks compare
sentences within one section only. ``bullet_count`` reads how many items a bullet list
has at one level.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from workers.evaluate.findings import sentences

_FENCED = re.compile(r"^[ \t]*(```|~~~).*?^[ \t]*\1[^\n]*$", re.M | re.S)
_INLINE_CODE = re.compile(r"``([^`]+?)``|`([^`\n]+(?:\n[^`\n]+)?)`")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_UNDERLINE = re.compile(r"^\s*([=\-~^*+#\"'])\1{2,}\s*$")
_UNDERLINE_CHARS = frozenset("=-~^*+#\"'")
#: A list item's line: ``- item``, ``* item``, ``1. item``.
BULLET = re.compile(r"^\s*(?:[-*+\u2022]|\d+[.)])\s")
_BULLET_ITEM = re.compile(r"^(?P<indent>[ \t]*)(?P<marker>[-*+\u2022]|\d+[.)])\s+(?P<item>\S.*)$")
_DOCTEST = re.compile(r"^\s*(?:>>>|\.\.\.)(?:\s|$)")
_NON_WORD = re.compile(r"\W+")
#: Where a clause ends inside a sentence: punctuation, a dash, or a coordinating word.
_CLAUSE_BREAK = re.compile(
    r"\s*[;:,()\[\]{}\u2014\u2013]\s*|\s+-{1,2}\s+|\s+(?:and|but|or|while|whereas|so)\s+", re.I
)
_BLANKS = re.compile(r"\s+")


def code_word(match: re.Match[str]) -> str:
    """An inline code span as one word: its text with every non-word run as ``_``."""
    inner = match.group(1) if match.group(1) is not None else match.group(2)
    return " x" + (_NON_WORD.sub("_", inner).strip("_") or "code") + " "


def sections(content: str) -> list[str]:
    """The prose of each section of ``content``, code left out, lines kept."""
    text = _INLINE_CODE.sub(code_word, _FENCED.sub("\n", content))
    return [block for block in _section_texts(text.splitlines()) if block.strip()]


def plain_sentences(section: str) -> list[str]:
    """The sentences and list items of a section, each on one line."""
    return [_BLANKS.sub(" ", s) for s in sentences(section)]


def _section_texts(lines: list[str]) -> Iterator[str]:
    kept: list[str] = []
    literal_indent: int | None = None
    doctest = False
    for index, line in enumerate(lines):
        bare = line.lstrip()
        indent = len(line) - len(bare)
        if literal_indent is not None:
            if not bare or indent > literal_indent:
                continue
            literal_indent = None
        if doctest and bare:
            continue
        doctest = bare.startswith((">>>", "...")) and bool(_DOCTEST.match(line))
        if doctest or bare.startswith(("|", "+")):
            continue
        if _breaks(line, bare, lines[index + 1] if index + 1 < len(lines) else ""):
            yield "\n".join(kept)
            kept = []
            continue
        if bare.rstrip().endswith("::"):
            literal_indent = indent
        elif bare and _next_indent(lines, index) > indent and not BULLET.match(line):
            yield "\n".join(kept)  # a definition's head: what follows is about it alone
            kept = []
        kept.append(line)
    yield "\n".join(kept)


def _breaks(line: str, bare: str, following: str) -> bool:
    """A heading, or the underline of one (reStructuredText), ends a section."""
    if bare.startswith("#") and _HEADING.match(line):
        return True
    for text in (bare, following.strip()):
        if len(text) >= 3 and text[0] in _UNDERLINE_CHARS and _UNDERLINE.match(text):
            return True
    return False


def _next_indent(lines: list[str], index: int) -> int:
    """The indentation of the next non-blank line after ``lines[index]`` (-1: none)."""
    for following in range(index + 1, len(lines)):
        line = lines[following]
        if line.strip():
            return len(line) - len(line.lstrip())
    return -1


def clauses(sentence: str) -> list[str]:
    """The clauses of one sentence, split at punctuation and coordinating words."""
    return [c.strip(" .!") for c in _CLAUSE_BREAK.split(sentence) if c and c.strip(" .!")]


def lines_after(text: str, position: int) -> Iterator[str]:
    """The lines after the one holding ``position``, one at a time."""
    start = text.find("\n", position)
    while start >= 0:
        end = text.find("\n", start + 1)
        yield text[start + 1 : end if end >= 0 else len(text)]
        start = end


def bullet_count(lines: Iterator[str], min_indent: int) -> tuple[int, ...]:
    """How many bullets follow at one level; empty when the list is nested or absent.

    The bullets must be indented at least ``min_indent``: a bullet that ends with a
    count is followed by its own items under it, not by its siblings.
    """
    items = 0
    indent: str | None = None
    marker = ""
    for line in lines:
        if not line.strip():
            continue
        bullet = _BULLET_ITEM.match(line)
        if indent is None:
            if bullet is None:
                return ()
            indent, marker = bullet["indent"], _kind(bullet["marker"])
            if len(indent) < min_indent:
                return ()
        if bullet is not None and bullet["indent"] == indent:
            if _kind(bullet["marker"]) != marker or bullet["item"].rstrip().endswith(":"):
                return ()
            items += 1
        elif len(line) - len(line.lstrip()) > len(indent):
            if bullet is not None:
                return ()  # a nested list: its items are not the count's
        else:
            break
    return (items,) if items >= 2 else ()


def _kind(marker: str) -> str:
    return "number" if marker[0].isdigit() else marker
