"""Parse each output once: the Floor, the Wall and the built-in Ceiling read the same trees.

Parsing dominates the engine's time (SQL most of all), and every layer needs the tree.
The caches are small and keyed by the content itself; the trees they hand out are shared,
so callers only read them.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import sqlglot
import sqlglot.errors
from sqlglot import exp

_CACHE_SIZE = 64


@dataclass(frozen=True, slots=True)
class ParseFailure:
    """Why the content does not parse, with the position when the parser gave one."""

    message: str
    line: int | None = None
    column: int | None = None


@lru_cache(maxsize=_CACHE_SIZE)
def python_tree(content: str) -> ast.Module | ParseFailure:
    """The module's AST, or why it is not Python."""
    try:
        return ast.parse(content)
    except SyntaxError as exc:
        return ParseFailure(exc.msg, exc.lineno, exc.offset)
    except (RecursionError, MemoryError, ValueError):
        return ParseFailure("too deeply nested or malformed to parse")


@lru_cache(maxsize=_CACHE_SIZE)
def json_document(content: str) -> Any:
    """The decoded document, or a ``ParseFailure``."""
    try:
        return json.loads(content)
    except json.JSONDecodeError as exc:
        return ParseFailure(exc.msg, exc.lineno, exc.colno)
    except RecursionError:
        return ParseFailure("nesting too deep to parse")


@lru_cache(maxsize=_CACHE_SIZE)
def sql_statements(content: str) -> tuple[exp.Expr, ...] | ParseFailure:
    """The statements, parsed strictly (any error is a failure), or a ``ParseFailure``."""
    try:
        parsed = sqlglot.parse(content, error_level=sqlglot.ErrorLevel.RAISE)
    except sqlglot.errors.SqlglotError as exc:
        text = str(exc)
        return ParseFailure(text.splitlines()[0][:300] if text else type(exc).__name__)
    except RecursionError:
        return ParseFailure("nesting too deep to parse")
    except Exception as exc:  # sqlglot's own bugs on odd input (seen: AttributeError)
        return ParseFailure(f"the SQL parser failed: {type(exc).__name__}: {exc}"[:300])
    statements = tuple(s for s in parsed if s is not None)
    return statements if statements else ParseFailure("no SQL statement found")
