"""tree-sitter grammars for the languages the standard library cannot parse.

JavaScript, TypeScript (and TSX), shell (tree-sitter-bash), HTML and Dockerfile each come
as one maintained grammar wheel. A grammar is loaded the first time an output needs it and
kept for the life of the process; a parser is made per call (cheap, and never shared
between threads). tree-sitter never gives up: it marks what it could not read with
``ERROR`` nodes and what it had to invent with ``MISSING`` ones. The first of either, in
document order, is the syntax error.
"""

from __future__ import annotations

import importlib
import threading
import warnings
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from workers.evaluate.parsed import ParseFailure

if TYPE_CHECKING:
    from tree_sitter import Language, Node


class Grammar(StrEnum):
    """One grammar wheel's language: ``module:function``."""

    JAVASCRIPT = "tree_sitter_javascript:language"
    TYPESCRIPT = "tree_sitter_typescript:language_typescript"
    TSX = "tree_sitter_typescript:language_tsx"
    BASH = "tree_sitter_bash:language"
    HTML = "tree_sitter_html:language"
    DOCKERFILE = "tree_sitter_dockerfile:language"


_LOADED: dict[Grammar, Language] = {}
_LOAD_LOCK = threading.Lock()
#: Longest excerpt of the unreadable code a message quotes.
_EXCERPT = 40
#: Bytes handed to tree-sitter at a time when a parse may be cancelled.
_CHUNK = 65536


def _language(grammar: Grammar) -> Language:
    found = _LOADED.get(grammar)
    if found is not None:
        return found
    with _LOAD_LOCK:
        if grammar not in _LOADED:
            from tree_sitter import Language

            module, function = grammar.value.split(":")
            pointer = getattr(importlib.import_module(module), function)()
            with warnings.catch_warnings():
                # tree-sitter-dockerfile 0.2 still hands over an int, which 0.26 deprecates.
                warnings.simplefilter("ignore", DeprecationWarning)
                _LOADED[grammar] = Language(pointer)
        return _LOADED[grammar]


def grammar_failure(grammar: Grammar, text: str, shown: str | None = None) -> ParseFailure | None:
    """The first thing ``grammar`` could not read in ``text``, or None when it read it all.

    ``shown``: the text the message quotes, when ``text`` was blanked in places first.
    """
    from tree_sitter import Parser

    source = text.encode("utf-8", errors="surrogatepass")
    root = Parser(_language(grammar)).parse(source).root_node
    if not root.has_error:
        return None
    bad = _first_error(root)
    if bad is None:
        return None
    row, byte_column = bad.start_point
    if shown is not None:
        source = shown.encode("utf-8", errors="surrogatepass")
    lines = source.split(b"\n")
    column = (
        len(lines[row][:byte_column].decode("utf-8", errors="replace")) + 1
        if row < len(lines)
        else 1
    )
    return ParseFailure(_message(bad, lines, row, byte_column), row + 1, column)


def _first_error(root: Node) -> Node | None:
    """The first ERROR or MISSING node in document order, descending only where errors are.

    An implicit end tag (HTML's ``</p>`` or ``</li>`` left out, or every element still open
    at the end of the document) is HTML's own syntax, not a missing token.
    """
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_error or (node.is_missing and not node.type.startswith("_implicit")):
            return node
        stack.extend(reversed([child for child in node.children if child.has_error]))
    return None


def _message(bad: Node, lines: list[bytes], row: int, byte_column: int) -> str:
    if bad.is_missing:
        return f"missing {bad.type!r}"
    rest = lines[row][byte_column:].decode("utf-8", errors="replace").strip()
    if not rest:
        return "unexpected end of line"
    excerpt = rest if len(rest) <= _EXCERPT else rest[: _EXCERPT - 3] + "..."
    return f"cannot parse {excerpt!r}"


def node_texts(grammar: Grammar, text: str, node_type: str, limit: int = 200) -> list[str]:
    """The text of every ``node_type`` node (the first ``limit``), in document order."""
    source = text.encode("utf-8", errors="surrogatepass")
    return [
        source[start:end].decode("utf-8", errors="replace")
        for start, end in node_spans(grammar, text, node_type, limit)
    ]


def node_spans(
    grammar: Grammar, text: str, node_type: str, limit: int | None = None
) -> list[tuple[int, int]]:
    """The byte span of every ``node_type`` node of ``text``'s tree (the first ``limit``)."""
    from tree_sitter import Parser

    source = text.encode("utf-8", errors="surrogatepass")
    stack = [Parser(_language(grammar)).parse(source).root_node]
    found: list[tuple[int, int]] = []
    while stack and (limit is None or len(found) < limit):
        node = stack.pop()
        if node.type == node_type:
            found.append((node.start_byte, node.end_byte))
        stack.extend(reversed(node.children))
    return found


@dataclass(frozen=True, slots=True)
class Unread:
    """What a recovering parse could not read in a text."""

    rows: int
    """On how many separate lines it met something it could not read."""
    share: float
    """The share of the text inside what it could not read (its ``ERROR`` nodes)."""


def unread(grammar: Grammar, text: str) -> Unread:
    """What ``grammar`` could not read in ``text``: on how many lines, and how much of it."""
    from tree_sitter import Parser

    source = text.encode("utf-8", errors="surrogatepass")
    stack = [Parser(_language(grammar)).parse(source).root_node]
    rows: set[int] = set()
    covered = 0
    while stack:
        node = stack.pop()
        if node.is_error or (node.is_missing and not node.type.startswith("_implicit")):
            rows.add(node.start_point[0])
            covered += node.end_byte - node.start_byte
            continue
        stack.extend(child for child in node.children if child.has_error)
    return Unread(len(rows), covered / max(1, len(source)))


def grammar_reads(grammar: Grammar, text: str) -> bool:
    """Whether ``grammar`` reads all of ``text``: a yes or no, given up at the first error.

    Telling that a text fails needs no tree: the parse is cancelled as soon as the
    parser meets an error (on prose, tree-sitter's recovery is many times slower than
    reading code). A stack the parser abandons may have met one too, so a no here can be
    wrong where ``grammar_failure`` finds nothing: ask this only where a false no is safe.
    """
    from tree_sitter import Parser

    source = text.encode("utf-8", errors="surrogatepass")
    try:
        tree = Parser(_language(grammar)).parse(
            lambda at, _point: source[at : at + _CHUNK],
            progress_callback=lambda _offset, has_error: has_error,
        )
    except ValueError:  # cancelled: an error was met
        return False
    return not tree.root_node.has_error
