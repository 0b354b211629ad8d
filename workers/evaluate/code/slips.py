"""Broken code, or not code in its tag's language at all: the parser's own evidence says which.

A model's slip leaves code that its parser reads up to the slip: a dropped bracket, a
missing colon, an unterminated string, a trailing comma, a line pushed off its block's
column, an answer cut off. So either the parser reads the block to its very end (it was
cut off: all of it before the end is code), or one such edit where the parser stopped
makes the whole block read. Program output, prose, an ASCII tree, a grammar or another
language under the tag is neither: its parser stops early, and no single bracket, colon,
quote, comma or indentation mends it, because the trouble is on every line. Such a block
is mis-tagged, not broken, and is listed as ``not <language>``, never failed.

Shell reads nearly any line as a command, so nearly any text is one edit away from a
script; there bash's own verdict and the commands' names decide (``shell_slips``).
"""

from __future__ import annotations

import textwrap
import unicodedata
from collections.abc import Callable, Iterator
from itertools import islice

from schemas.code import CodeLanguage
from workers.evaluate.code import edits, leniency
from workers.evaluate.code.grammars import Grammar, Unread, unread
from workers.evaluate.code.shell_slips import not_shell
from workers.evaluate.parsed import ParseFailure

_L = CodeLanguage
Reads = Callable[[str], bool]

#: Fewest edits tried on a block, whatever they cost.
MIN_EDITS = 16
#: Past this size a rejected block is broken code, unweighed: what documentation tags
#: wrongly (output, a tree, a grammar, a command) is short, a long block is a program,
#: and on a long program a recovering parser's first error can stand far from the slip.
LONG_BLOCK = 4_000
#: What the edits of one block may cost: characters parsed, weighed by the language.
PARSE_BUDGET = 3_000_000
#: The readings one edit of a short block may take (as written, as fragments, in other
#: dialects), and each parser's slowness beside CPython's (the C JSON decoder is fast,
#: sqlglot and tomllib are pure Python).
_READINGS = {_L.JSON: 4, _L.PYTHON: 3, _L.JAVASCRIPT: 6, _L.TYPESCRIPT: 7, _L.SQL: 8}
_SLOWNESS = {
    _L.JSON: 0.25,
    _L.PYTHON: 1.0,
    _L.JAVASCRIPT: 1.0,
    _L.TYPESCRIPT: 1.0,
    _L.DOCKERFILE: 1.0,
    _L.TOML: 2.0,
    _L.SQL: 5.0,
}
#: How much slower tree-sitter reads text it cannot read (its error recovery on prose)
#: than code: the cost of an edit grows with the share of the block it could not read.
_SLOWER_UNREAD = 25
#: Past this share of a block inside what its parser could not read, the block is not
#: code even when not every edit could be tried.
_MOSTLY = 0.5
#: Most separate lines one slip leaves a recovering parser (tree-sitter) unable to read.
MAX_SPOILED_ROWS = 8
_GRAMMARS = {
    _L.JAVASCRIPT: Grammar.JAVASCRIPT,
    _L.TYPESCRIPT: Grammar.TYPESCRIPT,
    _L.DOCKERFILE: Grammar.DOCKERFILE,
}
#: The brackets and separators a slip drops (or leaves), per language.
_TOKENS: dict[CodeLanguage, tuple[str, ...]] = {
    _L.PYTHON: (")", "]", "}", ":", ","),
    _L.JSON: ("}", "]", ",", ":"),
    _L.JAVASCRIPT: (")", "]", "}", ",", ":", ";"),
    _L.TYPESCRIPT: (")", "]", "}", ",", ":", ";"),
    _L.SQL: (")", ","),
    _L.TOML: ("=", "]", "}", ","),
    _L.DOCKERFILE: ("]", "\\"),
}
_C_COMMENTS = frozenset({_L.JAVASCRIPT, _L.TYPESCRIPT, _L.SQL})
#: ``compile`` flags with which a valid prefix of Python fails as "incomplete input"
#: (the REPL's test, ``codeop``: Python's own word that the text was cut off).
_INCOMPLETE_FLAGS = 0x4000 | 0x200


def not_code(language: CodeLanguage, body: str, failure: ParseFailure, reads: Reads) -> str:
    """Why the rejected ``body`` is not code in ``language`` at all; '' when it is broken code.

    ``reads``: whether a text parses as the block would (as written or as a fragment).
    Each edit costs a parse of the whole block (``PARSE_BUDGET``, ``MIN_EDITS``); a block
    whose edits run out before all were tried is taken for broken code, unless its
    parser could not read most of it. A block over ``LONG_BLOCK`` characters is broken
    code unweighed, unless it is drawn in symbols its parser cannot read
    (``_long_not_code``). YAML, HTML and XML are not weighed: YAML and HTML read nearly
    any text (a plain scalar, text between tags), and XML's slip, an end tag left out, is
    no one-character edit.
    """
    if len(body) > LONG_BLOCK:
        return _long_not_code(language, body, failure)
    if language is _L.SHELL:
        return not_shell(body, failure)
    if language not in _SLOWNESS:
        return ""
    if _cut_off(language, body, failure, reads):
        return ""
    grammar = _GRAMMARS.get(language)
    seen = unread(grammar, body) if grammar is not None else Unread(0, 0.0)
    if seen.rows > MAX_SPOILED_ROWS:
        return f"its parser finds errors on {seen.rows} separate lines, more than one slip leaves"
    cost = _SLOWNESS[language] * _READINGS.get(language, 2) * (1 + _SLOWER_UNREAD * seen.share)
    allowed = min(edits.MAX_EDITS, int(PARSE_BUDGET // (max(1, len(body)) * cost)))
    allowed = max(allowed, MIN_EDITS)
    tried = list(islice(edits.unique(_edits(language, body, failure)), allowed + 1))
    if any(reads(edited) for edited in tried[:allowed]):
        return ""
    if len(tried) > allowed and seen.share <= _MOSTLY:
        return ""  # not every edit was tried, and most of the block reads
    where = f"line {failure.line}" if failure.line is not None else "its start"
    return f"its parser stops at {where}, and no one bracket, colon, quote or indent mends it"


def _long_not_code(language: CodeLanguage, body: str, failure: ParseFailure) -> str:
    """Why a long rejected block is not code: a table or a picture drawn in symbols.

    A long block is a program, and its edits are not weighed; but a table drawn in box
    characters under a ``ts`` tag is long too. Its parser stops on a symbol outside ASCII
    (``│``, ``┌``), which the language has no use for outside strings and comments and no
    slip of a model puts there; and it cannot read most of the block, or cannot read it on
    more separate lines than one slip spoils. Both must hold.
    """
    grammar = _GRAMMARS.get(language)
    if grammar is None:
        return ""
    _, _, _, stop = edits.located(body, failure)
    char = body[stop : stop + 1]
    if not char or char.isascii() or not unicodedata.category(char).startswith("S"):
        return ""
    seen = unread(grammar, body)
    if seen.share <= _MOSTLY and seen.rows <= MAX_SPOILED_ROWS:
        return ""
    return f"its parser stops at the symbol {char!r}, and cannot read it on {seen.rows} lines"


def _cut_off(language: CodeLanguage, body: str, failure: ParseFailure, reads: Reads) -> bool:
    """Whether the block reads as code up to its end and stops only there: cut off."""
    if language is _L.PYTHON:
        return any(_incomplete(text) for text in dict.fromkeys((body, textwrap.dedent(body))))
    if _at_last_word(body, failure):
        return True
    ends = [body, body.rstrip().rstrip(",")]  # a list cut off after its comma
    if language in _C_COMMENTS:
        ends.append(body.rstrip() + " */")  # cut off inside a comment
    closed = dict.fromkeys(_closed(language, end) for end in ends)
    return any(text is not None and text != body and reads(text) for text in closed)


def _closed(language: CodeLanguage, text: str) -> str | None:
    """``text`` with the brackets it left open closed after it.

    None when a closer matches nothing open: the text is not merely cut short.
    """
    stack: list[str] = []
    for char in leniency.code_only(language, text):
        if char in edits.PAIRS:
            stack.append(edits.PAIRS[char])
        elif char in ")]}" and (not stack or stack.pop() != char):
            return None
    return text.rstrip() + "\n" + "".join(reversed(stack)) + "\n" if stack else text


def _incomplete(text: str) -> bool:
    try:
        compile(text, "<block>", "exec", _INCOMPLETE_FLAGS, dont_inherit=True)
    except SyntaxError as exc:
        return exc.msg == "incomplete input"
    except (ValueError, RecursionError, MemoryError):
        return False
    return False


def _at_last_word(body: str, failure: ParseFailure) -> bool:
    """Whether the parser stopped at the block's last word or after it."""
    if failure.line is None:
        return False
    lines = body.rstrip().split("\n")
    if failure.line != len(lines):
        return failure.line > len(lines)
    words = lines[-1].split()
    if not words:
        return True
    return (failure.column or 1) - 1 >= len(lines[-1].rstrip()) - len(words[-1])


def _edits(language: CodeLanguage, body: str, failure: ParseFailure) -> Iterator[str]:
    """The block with one slip undone near where its parser stopped, likeliest first."""
    lines, starts, row, stop = edits.located(body, failure)
    yield body[:stop] + body[stop + 1 :]
    before = len(body[:stop].rstrip())
    if before and not body[before - 1].isalnum():
        yield body[: before - 1] + body[before:]
    yield from edits.closed_brackets(language, body)
    yield from edits.closed_strings(language, body, failure)
    near = [r for r in edits.rows_near(row, len(lines)) if lines[r].strip()]
    spots = [stop, before]
    word = edits.WORD.match(body, stop)
    if word is not None and edits.unclosed(language, body, stop):
        spots.append(word.end())  # a key's separator, inside brackets: never a label's
    spots += [starts[r] + len(lines[r].rstrip()) for r in near]
    for spot in dict.fromkeys([*spots, len(body.rstrip())]):
        for token in _TOKENS[language]:
            yield body[:spot] + token + body[spot:]
    if language is _L.PYTHON:
        yield from edits.reindented(lines, near)
