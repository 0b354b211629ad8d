"""Wall consistency: contradictions, conflicting quantities and filters, count mismatches."""

from __future__ import annotations

import json

import pytest

from workers.evaluate.wall.consistency import check_consistency

from .builders import CLEAN_TEXT, GOOD_PYTHON, output
from .realdata import stdlib_source


@pytest.mark.parametrize(
    ("kind", "content", "code", "field"),
    [
        (
            "text",
            "The cache is enabled by default in production. "
            "The cache is not enabled by default in production.",
            "Contradiction",
            None,
        ),
        (
            "markdown",
            "# Limits\n\nUploads can exceed ten megabytes. Uploads cannot exceed ten megabytes.",
            "Contradiction",
            None,
        ),
        (
            "text",
            "There are 3 replicas behind the primary database. "
            "Later on, there are 5 replicas serving reads.",
            "ConflictingQuantity",
            None,
        ),
        ("json", json.dumps({"count": 3, "items": [1, 2]}), "CountMismatch", "$.count"),
        (
            "json",
            json.dumps({"report": {"total_users": 2, "users": ["a"], "teams": []}}),
            "CountMismatch",
            "$.report.total_users",
        ),
        (
            "sql",
            "SELECT id FROM orders WHERE status = 'open' AND status = 'closed'",
            "ContradictoryFilter",
            "status",
        ),
        (
            "python",
            "def f():\n    return 1\n\n\ndef f():\n    return 2\n",
            "Redefinition",
            "f",
        ),
    ],
)
def test_inconsistency_is_detected(kind: str, content: str, code: str, field: str | None) -> None:
    found = [f.issue for f in check_consistency(output(kind, content))]
    assert [(i.code, i.field) for i in found] == [(code, field)]
    assert found[0].fix


@pytest.mark.parametrize(
    ("kind", "content"),
    [
        ("text", CLEAN_TEXT),
        (
            "text",
            "The cache is enabled by default in production. "
            "The queue is not enabled by default in staging.",
        ),
        ("text", "There are 3 replicas behind the primary database and 3 replicas in total."),
        ("json", json.dumps({"count": 2, "items": [1, 2]})),
        ("json", json.dumps({"user_count": 1, "users": ["a"]})),
        ("sql", "SELECT id FROM orders WHERE status = 'open' AND region = 'eu'"),
        ("sql", "SELECT id FROM orders WHERE status IN ('open', 'closed')"),
        ("python", GOOD_PYTHON),
    ],
)
def test_consistent_counterpart_is_not_flagged(kind: str, content: str) -> None:
    assert check_consistency(output(kind, content)) == []


# --- SQL: filters no row can satisfy -----------------------------------------------------


@pytest.mark.parametrize(
    ("content", "field"),
    [
        ("SELECT id FROM t WHERE x > 5 AND x < 4", "x"),
        ("SELECT id FROM t WHERE x >= 3 AND x < 3", "x"),
        ("SELECT id FROM t WHERE x BETWEEN 5 AND 1", "x"),
        ("SELECT id FROM t WHERE 10 < x AND x <= 10", "x"),
        ("SELECT id FROM t WHERE x = 7 AND x > 9", "x"),
        ("SELECT id FROM t WHERE x > -1 AND x < -3", "x"),
        ("SELECT id FROM t WHERE t.x = 1 AND t.x = 2", "t.x"),
        ("SELECT k FROM t GROUP BY k HAVING COUNT(*) > 1 AND k > 3 AND k < 2", "k"),
        ("SELECT a.id FROM a JOIN b ON a.id = b.id AND b.n > 5 AND b.n < 5", "b.n"),
    ],
)
def test_contradictory_range_filters_are_found(content: str, field: str) -> None:
    found = [f.issue for f in check_consistency(output("sql", content))]
    assert [(i.code, i.field) for i in found] == [("ContradictoryFilter", field)]


@pytest.mark.parametrize(
    "content",
    [
        "SELECT id FROM t WHERE x > 4 AND x < 5",
        "SELECT id FROM t WHERE x >= 3 AND x <= 3",
        "SELECT id FROM t WHERE x BETWEEN 1 AND 5 AND x > 4",
        "SELECT id FROM t WHERE x > 5 OR x < 4",
        "SELECT id FROM t WHERE (x < 1 OR x > 9) AND x < 5",
        "SELECT id FROM t WHERE x = 1 AND x = 1.0",
        "SELECT id FROM t WHERE x > 5 AND y < 4",
        "SELECT id FROM t WHERE d >= '2024-01-01' AND d < '2023-01-01'",  # strings: not ordered
        "SELECT id FROM t WHERE 1 = 0",
    ],
)
def test_satisfiable_filters_are_not_flagged(content: str) -> None:
    assert check_consistency(output("sql", content)) == []


# --- Python: a definition that is dead, not one redefined on purpose ---------------------


@pytest.mark.parametrize(
    "content",
    [
        "class C:\n    @property\n    def x(self):\n        return self._x\n\n"
        "    @x.setter\n    def x(self, value):\n        self._x = value\n",
        "from typing import overload\n\n\n@overload\ndef f(x: int) -> int: ...\n"
        "@overload\ndef f(x: str) -> str: ...\ndef f(x):\n    return x\n",
        "import functools\n\n\n@functools.singledispatch\ndef show(x):\n    return str(x)\n\n\n"
        "@show.register\ndef _(x: int):\n    return hex(x)\n\n\n"
        "@show.register\ndef _(x: list):\n    return ','.join(map(str, x))\n",
        "def f():\n    return 1\n\n\nf = staticmethod(f)\n\n\ndef f():\n    return 2\n",
        "import sys\n\nif sys.platform == 'win32':\n    def sep():\n        return '\\\\'\n"
        "else:\n    def sep():\n        return '/'\n",
        "try:\n    from _speedups import scan\nexcept ImportError:\n"
        "    def scan(s):\n        return s\n",
    ],
    ids=[
        "property_setter",
        "overload",
        "singledispatch",
        "used_between",
        "conditional",
        "fallback",
    ],
)
def test_intended_redefinitions_are_not_flagged(content: str) -> None:
    assert check_consistency(output("python", content)) == []


def test_a_method_defined_twice_in_a_class_is_flagged() -> None:
    content = (
        "import unittest\n\n\nclass T(unittest.TestCase):\n"
        "    def test_a(self):\n        self.assertTrue(1)\n\n"
        "    def test_a(self):\n        self.assertTrue(2)\n"
    )
    found = [f.issue for f in check_consistency(output("python", content))]
    assert [(i.code, i.field) for i in found] == [("Redefinition", "test_a")]


@pytest.mark.parametrize("module", ["argparse.py", "typing.py", "enum.py", "functools.py"])
def test_real_stdlib_modules_have_no_redefinitions(module: str) -> None:
    assert check_consistency(output("python", stdlib_source(module))) == []


# --- prose: conditions and questions are not contradictions ------------------------------


@pytest.mark.parametrize(
    "content",
    [
        "If the flag is set, the cache is enabled. If the flag is not set, the cache is enabled.",
        "Is the cache enabled in staging? The cache is not enabled in staging.",
        "The cache is enabled in production.\n\n```\n# the cache is not enabled in production\n```",
    ],
)
def test_hedged_or_quoted_sentences_do_not_contradict(content: str) -> None:
    assert check_consistency(output("markdown", content)) == []
