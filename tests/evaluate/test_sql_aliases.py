"""The SQL Floor: one name for two sources or two columns of one SELECT."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workers.evaluate.floor.structure import check_floor

from .builders import output


def _violations(content: str) -> list[tuple[str, str | None]]:
    return [(v.code, v.field) for v in check_floor(output("sql", content), None).violations]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("SELECT u.id AS x, u.email AS x FROM users u", [("DuplicateAlias", "x")]),
        ("SELECT id, name AS id FROM users", [("DuplicateAlias", "id")]),
        ("SELECT 1 AS X, 2 AS x", [("DuplicateAlias", "x")]),  # unquoted: one name
        ("SELECT a FROM (SELECT 1 AS k, 2 AS k) AS s", [("DuplicateAlias", "k")]),
        ("SELECT 1 FROM a t JOIN b t ON 1 = 1", [("DuplicateAlias", "t")]),  # as before
        ("SELECT a.id, b.id FROM a JOIN b ON a.id = b.id", []),  # no alias: ordinary
        ("SELECT id AS id, id FROM users", []),  # one column, repeated
        ('SELECT 1 AS "X", 2 AS x', []),  # quoted: another name
        ("SELECT u.id AS x FROM users u UNION SELECT v.id AS x FROM v", []),  # two lists
        ("SELECT u.id AS x, (SELECT 1 AS x) AS y FROM users u", []),  # two scopes
        # addressed by position, every one: told apart on purpose (sqlglot's own tests)
        ("SELECT a AS j, -b AS j FROM x GROUP BY 1, 2 ORDER BY 1, -b", []),
        ("SELECT a AS j, -b AS j FROM x ORDER BY 1", [("DuplicateAlias", "j")]),
        # a bare column after an alias of its name: the alias again (a lateral alias)
        ("SELECT x.a + x.b AS f, f, f + 5 FROM x", []),
        ("SELECT x.a + x.b AS f, x.f FROM x", [("DuplicateAlias", "f")]),
        # two tables of one name in two schemas, told apart by their qualified names
        ("SELECT db1.a.id, db2.a.id FROM db1.a JOIN db2.a ON db1.a.id = db2.a.id", []),
        ("SELECT 1 FROM db.a JOIN db.a ON 1 = 1", [("DuplicateAlias", "db.a")]),
    ],
)
def test_duplicate_column_aliases_fail_the_floor(
    content: str, expected: list[tuple[str, str]]
) -> None:
    assert _violations(content) == expected


_NAMES = st.sampled_from(["a", "b", "A", "c"])
_EXPRESSIONS = st.sampled_from(["t.id", "t.email", "1", "t.id + 1", "COUNT(*)"])


@settings(max_examples=200, deadline=None)
@given(columns=st.lists(st.tuples(_EXPRESSIONS, _NAMES), min_size=1, max_size=5))
def test_a_name_aliased_to_two_expressions_is_always_found(
    columns: list[tuple[str, str]],
) -> None:
    content = "SELECT " + ", ".join(f"{e} AS {n}" for e, n in columns) + " FROM t"
    meanings: dict[str, set[str]] = {}
    for expression, name in columns:
        meanings.setdefault(name.casefold(), set()).add(expression.casefold())
    expected = sorted(n for n, m in meanings.items() if len(m) > 1)
    assert sorted(f or "" for c, f in _violations(content) if c == "DuplicateAlias") == expected
