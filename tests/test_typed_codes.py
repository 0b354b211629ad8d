"""Finding codes are enum members in code: a plain string that spells one is a defect.

A string compares equal to a ``StrEnum`` member, so a typo or a renamed code would pass
silently; the members do not. The one exception is the table the fitter writes
(``suspicion_weights``), read through ``IssueCode(...)`` when it loads.
"""

from __future__ import annotations

import ast
from pathlib import Path

from schemas.stages import IssueCode, ViolationCode

ROOT = Path(__file__).resolve().parent.parent
CODES = frozenset(c.value for c in IssueCode) | frozenset(c.value for c in ViolationCode)
#: Data, not code: written by ``python -m bench.fit_suspicion --write``.
WRITTEN_TABLES = frozenset({ROOT / "workers/evaluate/escalation/suspicion_weights.py"})


def spelled_codes(source: str) -> list[tuple[int, str]]:
    """(line, code) of each string literal in ``source`` that spells a code; docstrings aside."""
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value in CODES
        and id(node) not in docstrings
    ]


def test_no_module_spells_a_code_as_a_string() -> None:
    found = {
        f"{path.relative_to(ROOT)}:{line} {code!r}"
        for path in (ROOT / "workers").rglob("*.py")
        if path not in WRITTEN_TABLES
        for line, code in spelled_codes(path.read_text())
    }
    assert found == set()


def test_the_check_notices_a_string_code() -> None:
    source = 'def fix(v):\n    """MissingField"""\n    return v.code == "MissingField"\n'
    assert spelled_codes(source) == [(3, "MissingField")]
    assert spelled_codes("x = IssueCode.CONTRADICTS_INPUT\n") == []
