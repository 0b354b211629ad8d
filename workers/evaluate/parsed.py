"""Parse each output once: the Floor, the Wall and the built-in Ceiling read the same trees.

Parsing dominates the engine's time (SQL most of all), and every layer needs the tree.
The caches are small and keyed by the content itself; the trees they hand out are shared,
so callers only read them.
"""

from __future__ import annotations

import ast
import json
import logging
import threading
import warnings
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

import sqlglot
import sqlglot.errors
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.tokenizer_core import Token, TokenType

_CACHE_SIZE = 64
#: sqlglot's default dialect, the one ``sqlglot.parse`` reads with.
_DIALECT = Dialect.get_or_raise(None)
#: ``warnings.catch_warnings`` swaps process-wide state: one thread at a time (threads pool).
_QUIET_LOCK = threading.Lock()


@dataclass(frozen=True, slots=True)
class ParseFailure:
    """Why the content does not parse, with the position when the parser gave one."""

    message: str
    line: int | None = None
    column: int | None = None


@contextmanager
def _quiet() -> Iterator[None]:
    """Silence the parser's and compiler's warnings about the output being read.

    An invalid string escape and ``x is 1`` only warn; under ``-W error`` (pytest's
    ``filterwarnings = error``, a strict deployment) a warning becomes a SyntaxError and
    valid Python would fail the Floor. Nor should a node's output write to our stderr.
    """
    with _QUIET_LOCK, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@lru_cache(maxsize=_CACHE_SIZE)
def python_tree(content: str) -> ast.Module | ParseFailure:
    """The module's AST, or why it is not Python."""
    try:
        with _quiet():
            return ast.parse(content)
    except SyntaxError as exc:
        return ParseFailure(exc.msg, exc.lineno, exc.offset)
    except (RecursionError, MemoryError, ValueError):
        return ParseFailure("too deeply nested or malformed to parse")


@lru_cache(maxsize=_CACHE_SIZE)
def python_compile_error(content: str) -> ParseFailure | None:
    """What the compiler rejects in a module that parses, or None.

    ``ast.parse`` accepts ``break`` outside a loop, ``return`` at module level,
    ``nonlocal`` with no binding, a parameter declared ``global``, a late
    ``from __future__`` and the other symbol-table and code-generation errors; Python
    refuses to import such a module. The parsed tree is compiled, never run, and the
    code object is dropped. None too when the content does not parse (``python_tree``
    says why).
    """
    tree = python_tree(content)
    if isinstance(tree, ParseFailure):
        return None
    try:
        with _quiet():
            compile(tree, "<output>", "exec", dont_inherit=True)
    except SyntaxError as exc:
        return ParseFailure(exc.msg, exc.lineno, exc.offset)
    except (RecursionError, MemoryError, ValueError):
        return ParseFailure("too deeply nested or malformed to compile")
    return None


#: What holds statements: a statement, an ``except`` clause and a ``case``.
_HOLDERS = (ast.stmt, ast.excepthandler, ast.match_case)


def python_statements(tree: ast.Module) -> Iterator[ast.AST]:
    """The module, its statements, except clauses and match cases, in ``ast.walk``'s order.

    What only statements hold (definitions, their docstrings) is found here at a fraction
    of ``ast.walk``'s cost, which visits every name and constant as well. Expressions
    hold no statement, so none is missed.
    """
    queue: deque[ast.AST] = deque([tree])
    while queue:
        node = queue.popleft()
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, list):
                queue.extend(v for v in value if isinstance(v, _HOLDERS))
        yield node


@lru_cache(maxsize=_CACHE_SIZE)
def json_document(content: str) -> Any:
    """The decoded document, or a ``ParseFailure``."""
    try:
        return json.loads(content)
    except json.JSONDecodeError as exc:
        return ParseFailure(exc.msg, exc.lineno, exc.colno)
    except RecursionError:
        return ParseFailure("nesting too deep to parse")


class _NoEchoOfInput(logging.Filter):
    """Drops sqlglot's notes on what it parses: they quote the SQL, which is node output.

    sqlglot logs ``'<the SQL>' contains unsupported syntax`` at WARNING for every statement
    it reads as a bare command (``SHOW TABLES``, ``VACUUM``); a node's output would reach
    the worker's log verbatim, newlines and escape sequences included. Its errors still
    reach us as exceptions, so nothing it says below ERROR is needed.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.ERROR


@cache
def _sqlglot_quiet() -> None:
    """Install the filter once, on the first parse (never at import)."""
    logging.getLogger("sqlglot").addFilter(_NoEchoOfInput())


@lru_cache(maxsize=_CACHE_SIZE)
def sql_statements(content: str, dialect: str | None = None) -> tuple[exp.Expr, ...] | ParseFailure:
    """The statements, parsed strictly (any error is a failure), or a ``ParseFailure``."""
    _sqlglot_quiet()
    try:
        # Tokenize once: the parser and the cut-off check read the same tokens.
        reader = _DIALECT if dialect is None else Dialect.get_or_raise(dialect)
        tokens = reader.tokenize(content)
        parsed = reader.parser(error_level=sqlglot.ErrorLevel.RAISE).parse(tokens, content)
    except sqlglot.errors.ParseError as exc:
        return _sql_failure(exc)
    except sqlglot.errors.SqlglotError as exc:
        text = str(exc)
        return ParseFailure(text.splitlines()[0][:300] if text else type(exc).__name__)
    except RecursionError:
        return ParseFailure("nesting too deep to parse")
    except Exception as exc:  # sqlglot's own bugs on odd input (seen: AttributeError)
        return ParseFailure(f"the SQL parser failed: {type(exc).__name__}: {exc}"[:300])
    statements = tuple(s for s in parsed if s is not None)
    if not statements:
        return ParseFailure("no SQL statement found")
    return _dangling_end(tokens) or _stray_comma(tokens) or _unbalanced(tokens) or statements


def _sql_failure(exc: sqlglot.errors.ParseError) -> ParseFailure:
    """Sqlglot's first error, at the start of the token it names (its column is the end)."""
    first = exc.errors[0] if exc.errors else {}
    text = str(first.get("description") or exc).splitlines()[0][:300] or type(exc).__name__
    line, end, near = first.get("line"), first.get("col"), str(first.get("highlight") or "")
    if not isinstance(line, int) or not isinstance(end, int):
        return ParseFailure(text)
    if near:
        text = f"{text} near {near[:40]!r}"
    return ParseFailure(text, line, max(1, end - len(near) + 1))


#: Tokens a statement cannot end on. sqlglot's parser drops some of them silently
#: (``JOIN y ON`` parses as a cross join): a statement cut
#: off mid-clause must not pass the Floor as a different, valid query.
_DANGLING = frozenset(
    {
        TokenType.ON,
        TokenType.USING,
        TokenType.AND,
        TokenType.OR,
        TokenType.JOIN,
        TokenType.FROM,
        TokenType.WHERE,
        TokenType.SELECT,
        TokenType.GROUP_BY,
        TokenType.ORDER_BY,
        TokenType.HAVING,
        TokenType.ALIAS,
        TokenType.EQ,
        TokenType.L_PAREN,
    }
)


def _dangling_end(tokens: list[Token]) -> ParseFailure | None:
    """A statement that stops on a token no statement can end with, else None."""
    last = None
    for token in [*tokens, None]:
        if token is None or token.token_type is TokenType.SEMICOLON:
            if last is not None and last.token_type in _DANGLING:
                return ParseFailure(
                    f"the statement ends after {last.text!r}: it is cut off mid-clause",
                    last.line,
                    last.col,
                )
            last = None
        else:
            last = token
    return None


#: Tokens a comma cannot stand before: a list ends, or a clause begins, after its last item.
_AFTER_NO_COMMA = frozenset(
    {
        TokenType.FROM,
        TokenType.R_PAREN,
        TokenType.WHERE,
        TokenType.GROUP_BY,
        TokenType.ORDER_BY,
        TokenType.SEMICOLON,
    }
)


def _stray_comma(tokens: list[Token]) -> ParseFailure | None:
    """A comma after a list's last item (``SELECT a, FROM t``), else None.

    sqlglot's default dialect reads it, as BigQuery, DuckDB and Snowflake do; PostgreSQL,
    MySQL, SQLite and SQL Server refuse it, and a model that leaves one has dropped an item
    or misplaced a clause.
    """
    for comma, after in zip(tokens, [*tokens[1:], None], strict=True):
        if comma.token_type is TokenType.COMMA and (
            after is None or after.token_type in _AFTER_NO_COMMA
        ):
            shown = "the end" if after is None else repr(after.text)
            return ParseFailure(
                f"a comma before {shown}: the list ends on it", comma.line, comma.col
            )
    return None


def _unbalanced(tokens: list[Token]) -> ParseFailure | None:
    """A bracket left open or closing nothing (``CAST(x AS DATE``), else None.

    sqlglot's parser lets some go (a ``CAST`` or a function call cut off before its
    ``)``); no dialect does. Strings, comments and quoted names are tokens of their own,
    so only the statement's own brackets are counted.
    """
    opened: list[Token] = []
    for token in tokens:
        if token.token_type is TokenType.L_PAREN:
            opened.append(token)
        elif token.token_type is TokenType.R_PAREN:
            if not opened:
                return ParseFailure("a ')' that closes nothing", token.line, token.col)
            opened.pop()
    if opened:
        return ParseFailure("a '(' that is never closed", opened[-1].line, opened[-1].col)
    return None


def json_nodes(
    node: Any, *, max_depth: int, per_list: int | None = None, path: str = "$"
) -> Iterator[tuple[str, Any]]:
    """Every value of a parsed JSON document with its path, parents before children.

    The one walk every JSON check shares. ``max_depth`` and ``per_list`` bound the work a
    hostile document can ask for; keys are never yielded (``{"todo": []}`` names a field).
    """
    stack: list[tuple[str, Any, int]] = [(path, node, 0)]
    while stack:
        where, value, depth = stack.pop()
        if depth > max_depth:
            continue
        yield where, value
        if isinstance(value, dict):
            children = [(f"{where}.{k}", v) for k, v in value.items()]
        elif isinstance(value, list):
            children = [(f"{where}[{i}]", v) for i, v in enumerate(value[:per_list])]
        else:
            continue
        stack.extend((p, v, depth + 1) for p, v in reversed(children))
