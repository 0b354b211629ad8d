"""python_statements: every statement (and except clause and case), in ast.walk's order."""

from __future__ import annotations

import ast
from pathlib import Path

from schemas.request import NodeOutput, OutputKind
from workers.evaluate.parsed import python_statements
from workers.evaluate.wall.grounding.links import stated_texts

_MODULE = '''
"""Module doc."""
import os
try:
    def inner():
        """Under try."""
except ImportError:
    class Fallback:
        """In a handler."""
        def method(self):
            """Nested twice."""
finally:
    x = [lambda: 1 for _ in range(2)]
match os.name:
    case "posix":
        def posix():
            """In a case."""
    case _:
        pass
'''

_HOLDERS = (ast.Module, ast.stmt, ast.excepthandler, ast.match_case)


def test_statements_are_those_ast_walk_reaches_in_its_order() -> None:
    tree = ast.parse(_MODULE)
    assert list(python_statements(tree)) == [n for n in ast.walk(tree) if isinstance(n, _HOLDERS)]


def test_statements_match_ast_walk_on_the_standard_library() -> None:
    for path in sorted(Path(ast.__file__).parent.glob("*.py"))[:60]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        walked = [n for n in ast.walk(tree) if isinstance(n, _HOLDERS)]
        assert list(python_statements(tree)) == walked, path.name


def test_every_docstring_reaches_the_link_check() -> None:
    texts = list(stated_texts(NodeOutput(kind=OutputKind.PYTHON, content=_MODULE)))
    said = " ".join(texts)
    for doc in ("Module doc.", "Under try.", "In a handler.", "Nested twice.", "In a case."):
        assert doc in said
