"""Each fenced block of an output, read by its language's parser the way an editor reads it.

A block parses as written, or as the fragment it is (``leniency``), or it is rejected
with the parser's message and position. Whatever cannot be read with certainty is left
unchecked and never failed: an unknown language, an untagged block, a console session,
a diff, a template, and an error at or after a line the writer elided.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from schemas.code import MAX_LISTED_BLOCKS, BlockStatus, CodeBlock, CodeLanguage, Position
from schemas.request import NodeOutput, OutputKind
from workers.evaluate.code import leniency, slips
from workers.evaluate.code.fences import FencedBlock, fenced_blocks
from workers.evaluate.code.syntax import (
    parses_as_tsx,
    parses_in_sql_dialect,
    reads_quickly,
    syntax_error,
)
from workers.evaluate.parsed import ParseFailure

_CACHE_SIZE = 64
#: How a comment line opens in the languages read as fragments (a doc comment's ``*``).
_COMMENT_OPENERS = ("//", "/*", "*", "#", "<!--", "--")
#: Most blocks of one output that are parsed.
MAX_READ_BLOCKS = 100
#: Most rejected blocks of one output whose parse errors are weighed as slips or not code
#: (``slips``: each may cost a hundred parses and more); past them a rejected block is broken.
MAX_JUDGED_BLOCKS = 10


@dataclass(frozen=True, slots=True)
class BlockReading:
    """What became of one block, and the parser's failure when it was rejected."""

    block: FencedBlock
    status: BlockStatus
    note: str = ""
    failure: ParseFailure | None = None
    judged: bool = False
    """Whether its parse error was weighed (``slips``): it counts toward the output's cap."""

    @property
    def position(self) -> Position | None:
        """Where the parser stopped, inside the block and in the output."""
        failure = self.failure
        if failure is None or failure.line is None:
            return None
        return Position(
            line=failure.line,
            column=max(1, failure.column or 1),
            block=self.block.index,
            output_line=self.block.start_line + failure.line - 1,
        )

    def summary(self) -> CodeBlock:
        """The block as a result lists it."""
        return CodeBlock(
            block=self.block.index,
            tag=self.block.tag,
            language=self.block.language,
            line=self.block.start_line,
            status=self.status,
            note=self.note[:300],
        )

    def describe(self) -> str:
        """``block 2 (python, output line 14), line 3, column 5: <message>``."""
        block = self.block
        where = f"block {block.index} ({block.tag or 'untagged'}, output line {block.start_line})"
        failure = self.failure
        if failure is None:
            return where
        if failure.line is None:
            return f"{where}: {failure.message}"
        return f"{where}, line {failure.line}, column {failure.column or 1}: {failure.message}"


def listed_blocks(output: NodeOutput) -> tuple[CodeBlock, ...]:
    """What a result lists of a markdown or text output's fenced blocks (the first fifty)."""
    if output.kind not in (OutputKind.MARKDOWN, OutputKind.TEXT):
        return ()
    return tuple(r.summary() for r in read_blocks(output.content)[:MAX_LISTED_BLOCKS])


@lru_cache(maxsize=_CACHE_SIZE)
def read_blocks(text: str) -> tuple[BlockReading, ...]:
    """Every fenced block of ``text``, read; () when there is none.

    Past the first ``MAX_READ_BLOCKS`` blocks none is parsed: an output of thousands of
    tiny broken blocks must not buy thousands of parses (each failing block tries several
    readings).
    """
    readings: list[BlockReading] = []
    judged = 0
    for block in fenced_blocks(text):
        if block.index > MAX_READ_BLOCKS:
            why = f"past the first {MAX_READ_BLOCKS} blocks"
            readings.append(BlockReading(block, BlockStatus.UNCHECKED, why))
            continue
        readings.append(read_block(block, judge=judged < MAX_JUDGED_BLOCKS))
        judged += readings[-1].judged
    return tuple(readings)


def read_block(block: FencedBlock, *, judge: bool = True) -> BlockReading:
    """One block: parsed, rejected or unchecked, and why.

    ``judge``: whether a rejected block's error is weighed as a slip or as text that is
    not code in its language (``slips``); unweighed, it is a syntax error.
    """
    language, body = block.language, block.body
    if language is None:
        why = f"no parser for {block.tag!r}" if block.tag else "untagged, of no certain language"
        return BlockReading(block, BlockStatus.UNCHECKED, why)
    body = leniency.in_dialect(block.tag, language, body)
    unchecked = _not_code(language, body)
    if unchecked:
        return BlockReading(block, BlockStatus.UNCHECKED, unchecked)
    how = _parses(language, body)
    if how is not None:
        return BlockReading(block, BlockStatus.PARSED, how)
    failure = _furthest(language, body)
    if leniency.is_template_error(language, body, failure.line if failure else None):
        return BlockReading(block, BlockStatus.UNCHECKED, "a template: parsed once filled in")
    elided = leniency.elided_lines(language, body)
    if elided and (
        failure is None
        or failure.line is None
        or failure.line >= elided[0]
        or _parses_closed(language, leniency.neutralised(language, body))
    ):
        return BlockReading(
            block, BlockStatus.UNCHECKED, f"code elided on line {elided[0]}: the rest is partial"
        )
    if failure is None or not judge:
        return BlockReading(block, BlockStatus.SYNTAX_ERROR, failure=failure)
    if elided and _reads_before(language, body, elided[0]):
        elided = []  # the code before the elision reads already: no edit of it mends more
    foreign = slips.not_code(language, body, failure, lambda text: _mended(language, text, elided))
    if foreign:
        note = f"not {language.value}: {foreign}"
        return BlockReading(block, BlockStatus.UNCHECKED, note, judged=True)
    return BlockReading(block, BlockStatus.SYNTAX_ERROR, failure=failure, judged=True)


def _furthest(language: CodeLanguage, body: str) -> ParseFailure | None:
    """Where the block's parser stops: as a file, or as the fragment it is.

    A fragment read as a whole file stops on its first line of code (JSON members at
    their first colon, class members at their first method); read as the fragment it is,
    it stops at the slip, the place to name and to look for the edit that mends it
    (``slips``). A block whose reading as a file gets past its first line is a file, and
    its failure stands (a wrapper would hide what a file has only at its top, such as a
    TypeScript ``/// <reference>`` directive after a licence).
    """
    text = leniency.neutralised(language, body)
    found = syntax_error(language, text) or syntax_error(language, body)
    if found is None or found.line is None or found.line != _first_code_line(text):
        return found
    last = text.count("\n") + 1
    for wrapped, _, in_place in leniency.fragment_readings(language, text):
        failure = syntax_error(language, wrapped) if in_place else None
        if failure is not None and failure.line is not None and failure.line - 1 > found.line:
            line = min(failure.line - 1, last)
            column = failure.column if line == failure.line - 1 else None
            found = ParseFailure(failure.message, line, column)
    return found


def _first_code_line(text: str) -> int:
    """The 1-based number of ``text``'s first line that is neither blank nor a comment."""
    for number, line in enumerate(text.split("\n"), 1):
        if line.strip() and not line.lstrip().startswith(_COMMENT_OPENERS):
            return number
    return 1


def _reads(language: CodeLanguage, text: str) -> bool:
    return _parses(language, text, quick=True) is not None


def _mended(language: CodeLanguage, text: str, elided: list[int]) -> bool:
    """Whether an edited block reads, or reads up to the first line its writer elided.

    No edit supplies what the writer left out (the result shown after ``=>``), so an edit
    that makes the code shown before it read has mended a slip there. Only that code
    counts: an edit that opens a string swallowing the rest mends nothing.
    """
    return _reads(language, text) or (bool(elided) and _reads_before(language, text, elided[0]))


def _reads_before(language: CodeLanguage, text: str, line: int) -> bool:
    """Whether the code before ``line`` reads, with the brackets it leaves open closed."""
    shown = "\n".join(text.split("\n")[: line - 1])
    if not shown.strip():
        return False
    completed = leniency.closed(shown)
    return _reads(language, shown) or (completed is not None and _reads(language, completed))


def _parses_closed(language: CodeLanguage, text: str) -> bool:
    """Whether the code up to an elision parses once the brackets it left open are closed."""
    completed = leniency.closed(text)
    return completed is not None and syntax_error(language, completed) is None


def _not_code(language: CodeLanguage, body: str) -> str:
    if not body.strip():
        return "empty"
    if leniency.is_diff(body):
        return "a diff"
    if leniency.is_console_session(body) or leniency.has_prompt_line(language, body):
        return "a console session"
    return ""


def _parses(language: CodeLanguage, body: str, *, quick: bool = False) -> str | None:
    """How the block parses (as written, or as a fragment), or None when no reading does.

    ``quick``: a reading that fails is given up at its first error (``reads_quickly``).
    """

    def reads(text: str) -> bool:
        return reads_quickly(language, text) if quick else syntax_error(language, text) is None

    if reads(body):
        return ""
    text = leniency.neutralised(language, body)
    texts = [text]
    for left_out in (leniency.items_elided, leniency.handlers_left_out):
        completed = left_out(language, body)
        if completed != body:
            texts.append(leniency.neutralised(language, completed))
    for candidate in texts:
        if (
            candidate != body
            and reads(candidate)
            and not leniency.synopsis_left_open(language, body)
        ):
            return "parsed with its elisions and placeholders standing in as code"
        for wrapped, how, _ in leniency.fragment_readings(language, candidate):
            if reads(wrapped):
                return f"a fragment, read as {how}"
    return _other_dialect(language, text, quick=quick)


def _other_dialect(language: CodeLanguage, text: str, *, quick: bool = False) -> str | None:
    if language is CodeLanguage.SQL:
        dialect = parses_in_sql_dialect(text)
        return None if dialect is None else f"read in the {dialect} dialect"
    if language is CodeLanguage.TYPESCRIPT and parses_as_tsx(text, quick=quick):
        return "read as TSX"
    if language is CodeLanguage.JSON:
        lines = leniency.json_lines(text)
        if len(lines) > 1 and all(syntax_error(language, line) is None for line in lines):
            return "read as JSON Lines"
        if leniency.json_sequence(text):
            return "read as a sequence of JSON documents"
    return None
