"""Parse each output once: the Floor, the Wall and the built-in Ceiling read the same trees.

Parsing dominates the engine's time (SQL most of all), and every layer needs the tree.
The caches are small and keyed by the content itself; the trees they hand out are shared,
so callers only read them.
"""

from __future__ import annotations

import ast
import json
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import sqlglot
import sqlglot.errors
from sqlglot import exp

_CACHE_SIZE = 64
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
