"""One edit that undoes a slip: where a model's dropped bracket, quote or indent belongs.

Each generator yields the text with one edit made, likeliest first, near where a parser
stopped (``located``): a bracket left open closed where its closer may have stood, a
string left open closed after a word of its line, a line moved to its neighbour's column.
``slips`` and ``shell_slips`` ask a parser which of them reads.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from schemas.code import CodeLanguage
from workers.evaluate.code import leniency
from workers.evaluate.parsed import ParseFailure

_L = CodeLanguage
#: Most edits tried on one block before it is judged no slip.
MAX_EDITS = 120

#: Lines on either side of where the parser stopped that an edit may touch.
_REACH = 3
#: Lines between a multi-line bracket's opener and the stop where its closer is sought.
_LINE_SPOTS = 8
#: Lines before the stop where a string left open may have started.
_QUOTE_REACH = 40
QUOTES: dict[CodeLanguage, tuple[str, ...]] = {
    _L.JSON: ('"',),
    _L.SHELL: ('"', "'", "`"),
    _L.JAVASCRIPT: ('"', "'", "`"),
    _L.TYPESCRIPT: ('"', "'", "`"),
}


#: Where a token may end: before a space, a separator or a closer, or at the line's end.
_TOKEN_END = re.compile(r"(?<=\S)(?=[ \t,;:)\]}]|$)", re.M)
PAIRS = {"(": ")", "[": "]", "{": "}"}
WORD = re.compile(r"[\w$.'\"-]+")


def located(body: str, failure: ParseFailure) -> tuple[list[str], list[int], int, int]:
    """The block's lines, where each starts, and the row and offset where the parser stopped."""
    lines = body.split("\n")
    row = min(max((failure.line or len(lines)) - 1, 0), len(lines) - 1)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    return lines, starts, row, starts[row] + min(max((failure.column or 1) - 1, 0), len(lines[row]))


def closed_brackets(language: CodeLanguage, body: str) -> Iterator[str]:
    """The block with a bracket left open closed where its closer may have stood."""
    ends = [m.start() for m in _TOKEN_END.finditer(body)]
    for opener, closer in unclosed(language, body, len(body)):
        spots = _closing_spots(body, opener, ends, len(body))
        yield from (body[:at] + closer + body[at:] for at in spots)


def closed_strings(language: CodeLanguage, body: str, failure: ParseFailure) -> Iterator[str]:
    """The block with a string left open closed after a word of its line."""
    lines, starts, row, _ = located(body, failure)
    ends = [m.start() for m in _TOKEN_END.finditer(body)]
    for quote in QUOTES.get(language, ('"', "'")):
        for r in _odd_rows(lines, row, quote):
            line_ends = [at for at in ends if starts[r] <= at < starts[r + 1]]
            first = starts[r] + lines[r].find(quote)
            yield from (body[:at] + quote + body[at:] for at in reversed(line_ends) if at > first)


def _closing_spots(body: str, opener: int, ends: list[int], limit: int) -> Iterator[int]:
    """Where a dropped closer may have stood.

    After a word on the opener's lines, or opening a later line as far in as the
    opener's: a multi-line bracket's closer has a line of its own.
    """
    line_start = body.rfind("\n", 0, opener) + 1
    indent = indent_of(body[line_start : body.find("\n", opener) % (len(body) + 1)])
    reach = line_start
    for _ in range(_REACH + 1):
        reach = body.find("\n", reach) + 1 or len(body)
    yield from (at for at in ends if opener < at < reach)
    at, found = reach, 0
    while 0 < at < limit and found < _LINE_SPOTS:
        line = body[at : body.find("\n", at) % (len(body) + 1)]
        if line.strip() and indent_of(line) == indent:
            found += 1
            yield at + indent
        at = body.find("\n", at) + 1


def _odd_rows(lines: list[str], row: int, quote: str) -> Iterator[int]:
    """Rows near the stop with an odd count of ``quote``: a string left open.

    A string whose closing quote is lost swallows the code after it up to the next
    quote, so the parser may stop well after the slip (or, recovering, well before it).
    """
    found = 0
    after = range(row + 1, min(len(lines), row + _QUOTE_REACH))
    for r in [*range(row, max(-1, row - _QUOTE_REACH), -1), *after]:
        if lines[r].count(quote) % 2 == 1:
            yield r
            found += 1
            if found == _REACH:
                return


def unclosed(language: CodeLanguage, body: str, limit: int) -> list[tuple[int, str]]:
    """The brackets left open near the stop (innermost first), with the closer each wants.

    Read up to the first closer that matches nothing open, or up to ``limit``: a dropped
    closer leaves its opener open there. Strings and comments are skipped.
    """
    code = leniency.code_only(language, body)
    stack: list[tuple[int, str]] = []
    for at, char in enumerate(code[:limit]):
        if char in PAIRS:
            stack.append((at, PAIRS[char]))
        elif char in ")]}":
            if not stack or stack[-1][1] != char:
                break
            stack.pop()
    return list(reversed(stack))[:2]


def rows_near(row: int, count: int) -> list[int]:
    """The stop's row, then the rows after it, then those before it, nearest first."""
    after = range(row + 1, min(count, row + _REACH + 1))
    before = range(row - 1, max(-1, row - _REACH - 1), -1)
    return [row, *after, *before]


def reindented(lines: list[str], near: list[int]) -> Iterator[str]:
    """A line near the stop moved to the column of the code line before or after it."""
    for r in near[:3]:
        for other in (r - 1, r + 1):
            if 0 <= other < len(lines) and lines[other].strip():
                indent = lines[other][: indent_of(lines[other])]
                yield "\n".join([*lines[:r], indent + lines[r].lstrip(), *lines[r + 1 :]])


def unique(texts: Iterator[str]) -> Iterator[str]:
    """Each text once, in order: two edits may make the same text."""
    seen: set[str] = set()
    for text in texts:
        if text not in seen:
            seen.add(text)
            yield text


def indent_of(line: str) -> int:
    """How far in ``line`` starts."""
    return len(line) - len(line.lstrip())
