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
script; there bash's own verdict and the commands' names decide (``_not_shell``).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Iterator
from itertools import chain, islice

from schemas.code import CodeLanguage
from workers.evaluate.code import leniency
from workers.evaluate.code.grammars import Grammar, Unread, grammar_failure, node_texts, unread
from workers.evaluate.code.syntax import syntax_error
from workers.evaluate.parsed import ParseFailure

_L = CodeLanguage
Reads = Callable[[str], bool]

#: Most edits tried on one block before it is judged no slip.
MAX_EDITS = 120
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
    _L.HTML: Grammar.HTML,
    _L.DOCKERFILE: Grammar.DOCKERFILE,
}
#: Lines on either side of where the parser stopped that an edit may touch.
_REACH = 3
#: Lines between a multi-line bracket's opener and the stop where its closer is sought.
_LINE_SPOTS = 8
#: Lines before the stop where a string left open may have started.
_QUOTE_REACH = 40
#: The brackets and separators a slip drops (or leaves), per language.
_TOKENS: dict[CodeLanguage, tuple[str, ...]] = {
    _L.PYTHON: (")", "]", "}", ":", ","),
    _L.JSON: ("}", "]", ",", ":"),
    _L.JAVASCRIPT: (")", "]", "}", ",", ":", ";"),
    _L.TYPESCRIPT: (")", "]", "}", ",", ":", ";"),
    _L.SQL: (")", ","),
    _L.YAML: (":", "]", "}"),
    _L.TOML: ("=", "]", "}", ","),
    _L.XML: (">", "/>"),
    _L.HTML: (">",),
    _L.DOCKERFILE: ("]", "\\"),
}
_QUOTES: dict[CodeLanguage, tuple[str, ...]] = {
    _L.JSON: ('"',),
    _L.SHELL: ('"', "'", "`"),
    _L.JAVASCRIPT: ('"', "'", "`"),
    _L.TYPESCRIPT: ('"', "'", "`"),
}
_INDENTED = frozenset({_L.PYTHON, _L.YAML})
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
    code unweighed. YAML, HTML and XML are not weighed: YAML and HTML read nearly any text
    (a plain scalar, text between tags), and XML's slip, an end tag left out, is no
    one-character edit.
    """
    if len(body) > LONG_BLOCK:
        return ""
    if language is _L.SHELL:
        return _not_shell(body, failure)
    if language not in _SLOWNESS:
        return ""
    if _cut_off(language, body, failure, reads):
        return ""
    grammar = _GRAMMARS.get(language)
    seen = unread(grammar, body) if grammar is not None else Unread(0, 0.0)
    if seen.rows > MAX_SPOILED_ROWS:
        return f"its parser finds errors on {seen.rows} separate lines, more than one slip leaves"
    cost = _SLOWNESS[language] * _READINGS.get(language, 2) * (1 + _SLOWER_UNREAD * seen.share)
    allowed = min(MAX_EDITS, int(PARSE_BUDGET // (max(1, len(body)) * cost)))
    allowed = max(allowed, MIN_EDITS)
    edits = list(islice(_unique(_edits(language, body, failure)), allowed + 1))
    if any(reads(edited) for edited in edits[:allowed]):
        return ""
    if len(edits) > allowed and seen.share <= _MOSTLY:
        return ""  # not every edit was tried, and most of the block reads
    where = f"line {failure.line}" if failure.line is not None else "its start"
    return f"its parser stops at {where}, and no one bracket, colon, quote or indent mends it"


def _unique(texts: Iterator[str]) -> Iterator[str]:
    seen: set[str] = set()
    for text in texts:
        if text not in seen:
            seen.add(text)
            yield text


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
        if char in _PAIRS:
            stack.append(_PAIRS[char])
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


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


#: Where a token may end: before a space, a separator or a closer, or at the line's end.
_TOKEN_END = re.compile(r"(?<=\S)(?=[ \t,;:)\]}]|$)", re.M)
_PAIRS = {"(": ")", "[": "]", "{": "}"}
_WORD = re.compile(r"[\w$.'\"-]+")


def _edits(language: CodeLanguage, body: str, failure: ParseFailure) -> Iterator[str]:
    """The block with one slip undone near where its parser stopped, likeliest first."""
    lines, starts, row, stop = _located(body, failure)
    yield body[:stop] + body[stop + 1 :]
    before = len(body[:stop].rstrip())
    if before and not body[before - 1].isalnum():
        yield body[: before - 1] + body[before:]
    yield from _closed_brackets(language, body)
    yield from _closed_strings(language, body, failure)
    near = [r for r in _rows_near(row, len(lines)) if lines[r].strip()]
    spots = [stop, before]
    word = _WORD.match(body, stop)
    if word is not None and _unclosed(language, body, stop):
        spots.append(word.end())  # a key's separator, inside brackets: never a label's
    spots += [starts[r] + len(lines[r].rstrip()) for r in near]
    for spot in dict.fromkeys([*spots, len(body.rstrip())]):
        for token in _TOKENS[language]:
            yield body[:spot] + token + body[spot:]
    if language in _INDENTED:
        yield from _reindented(lines, near)


def _located(body: str, failure: ParseFailure) -> tuple[list[str], list[int], int, int]:
    """The block's lines, where each starts, and the row and offset where the parser stopped."""
    lines = body.split("\n")
    row = min(max((failure.line or len(lines)) - 1, 0), len(lines) - 1)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    return lines, starts, row, starts[row] + min(max((failure.column or 1) - 1, 0), len(lines[row]))


def _closed_brackets(language: CodeLanguage, body: str) -> Iterator[str]:
    """The block with a bracket left open closed where its closer may have stood."""
    ends = [m.start() for m in _TOKEN_END.finditer(body)]
    for opener, closer in _unclosed(language, body, len(body)):
        spots = _closing_spots(body, opener, ends, len(body))
        yield from (body[:at] + closer + body[at:] for at in spots)


def _closed_strings(language: CodeLanguage, body: str, failure: ParseFailure) -> Iterator[str]:
    """The block with a string left open closed after a word of its line."""
    lines, starts, row, _ = _located(body, failure)
    ends = [m.start() for m in _TOKEN_END.finditer(body)]
    for quote in _QUOTES.get(language, ('"', "'")):
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
    indent = _indent(body[line_start : body.find("\n", opener) % (len(body) + 1)])
    reach = line_start
    for _ in range(_REACH + 1):
        reach = body.find("\n", reach) + 1 or len(body)
    yield from (at for at in ends if opener < at < reach)
    at, found = reach, 0
    while 0 < at < limit and found < _LINE_SPOTS:
        line = body[at : body.find("\n", at) % (len(body) + 1)]
        if line.strip() and _indent(line) == indent:
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


def _unclosed(language: CodeLanguage, body: str, limit: int) -> list[tuple[int, str]]:
    """The brackets left open near the stop (innermost first), with the closer each wants.

    Read up to the first closer that matches nothing open, or up to ``limit``: a dropped
    closer leaves its opener open there. Strings and comments are skipped.
    """
    code = leniency.code_only(language, body)
    stack: list[tuple[int, str]] = []
    for at, char in enumerate(code[:limit]):
        if char in _PAIRS:
            stack.append((at, _PAIRS[char]))
        elif char in ")]}":
            if not stack or stack[-1][1] != char:
                break
            stack.pop()
    return list(reversed(stack))[:2]


def _rows_near(row: int, count: int) -> list[int]:
    """The stop's row, then the rows after it, then those before it, nearest first."""
    after = range(row + 1, min(count, row + _REACH + 1))
    before = range(row - 1, max(-1, row - _REACH - 1), -1)
    return [row, *after, *before]


def _reindented(lines: list[str], near: list[int]) -> Iterator[str]:
    """A line near the stop moved to the column of the code line before or after it."""
    for r in near[:3]:
        for other in (r - 1, r + 1):
            if 0 <= other < len(lines) and lines[other].strip():
                indent = lines[other][: _indent(lines[other])]
                yield "\n".join([*lines[:r], indent + lines[r].lstrip(), *lines[r + 1 :]])


#: Bash's reserved words and control operators: a slip (a dropped ``then``, ``do`` or
#: opening bracket) leaves one of these where bash does not expect it.
_SHELL_GRAMMAR = frozenset(
    "! case coproc do done elif else esac fi for function if in select then time until while"
    " { } [[ ]] || && & ; ;; ;& ;;& | |& ) newline < > >> <& >& <> << <<- <<< >|".split()
)
_UNEXPECTED = re.compile(r"unexpected token `(.*)'$")
#: ``[a | b]`` on the line where the parser stops: a ``|`` inside brackets glued to a
#: word (not ``[[``, not ``||``). To bash a ``|`` ends a command wherever it stands, so
#: the brackets cannot hold it: a synopsis's alternatives do.
_ALTERNATIVES = re.compile(r"(?<!\[)\[[^\[\]\s][^\]\n]*?(?<!\|)\|(?!\|)[^\]\n]*\]")
_QUOTED = re.compile(r"'[^'\n]*'|\"(?:\\.|[^\"\\\n])*\"")
#: What a shell block may really be when bash refuses it: languages bash's grammar is not.
_OTHER_LANGUAGES = (_L.PYTHON, _L.JAVASCRIPT, _L.TYPESCRIPT, _L.JSON)


def _not_shell(body: str, failure: ParseFailure) -> str:
    """Why the block bash refuses is not a shell script at all; '' when it is one, broken.

    Alternatives in brackets (``[a | b]``) are a synopsis's. A block that another language
    reads whole is that language. A command is a program's name: a block whose commands
    are mostly named by punctuation (``+--``, ``|``) is a drawing. A script's slip leaves
    a string or a bracket open, and closing it mends the script; failing that, a call's
    ``(`` after a command's words, or a word where bash wanted an operator, is another
    language's syntax.
    """
    read = grammar_failure(Grammar.BASH, body)
    stopped = body.split("\n")[(read.line or 1) - 1] if read is not None else ""
    alternatives = _ALTERNATIVES.search(_QUOTED.sub("", stopped))
    if alternatives is not None:
        return f"{alternatives.group(0)[:40]!r} offers alternatives, as a synopsis does"
    other = next((o for o in _OTHER_LANGUAGES if syntax_error(o, body) is None), None)
    if other is not None:
        return f"it reads as {other.value}"
    names = node_texts(Grammar.BASH, body, "command_name")
    nameless = [n for n in names if not any(c.isalnum() for c in n)]
    if len(nameless) >= 2 and 2 * len(nameless) >= len(names):
        return f"{len(nameless)} of its {len(names)} commands have no name: a drawing"
    if any(grammar_failure(Grammar.BASH, text) is None for text in _shell_edits(body, failure)):
        return ""  # a string, a bracket or a compound left open: a script's slip
    unexpected = _UNEXPECTED.search(failure.message)
    if unexpected and unexpected.group(1) not in _SHELL_GRAMMAR:
        return f"bash stops at {unexpected.group(1)[:30]!r}, where a script has none"
    return ""


#: What a script's slip leaves out where bash stops: a closer or a compound's keyword.
_SHELL_TOKENS = (")", ";;", ";", "; then", "; do", "\nfi", "\ndone", "\nesac", "}")


def _shell_edits(body: str, failure: ParseFailure) -> Iterator[str]:
    """The script with one slip undone, where bash stopped and where tree-sitter-bash did.

    Bash names the end of the file for a string left open; tree-sitter-bash, recovering,
    may name the top of the script: the slip is near one of them.
    """
    read = grammar_failure(Grammar.BASH, body)
    stops = [failure] if read is None else [failure, read]
    edits = chain(
        chain.from_iterable(_closed_strings(_L.SHELL, body, stop) for stop in stops),
        _closed_brackets(_L.SHELL, body),
        chain.from_iterable(_shell_tokens(body, stop) for stop in stops),
    )
    return islice(_unique(edits), MAX_EDITS)


def _shell_tokens(body: str, failure: ParseFailure) -> Iterator[str]:
    lines, starts, row, stop = _located(body, failure)
    before = len(body[:stop].rstrip())
    spots = [stop, before, starts[row] + len(lines[row].rstrip())]
    for spot in dict.fromkeys(spots):
        for token in _SHELL_TOKENS:
            yield body[:spot] + token + body[spot:]
