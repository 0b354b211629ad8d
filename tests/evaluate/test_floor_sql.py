"""The SQL Floor: what a database refuses before running the query, with and without a catalog."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from pydantic import ValidationError

from schemas.request import OutputContract
from workers.evaluate.floor.structure import check_floor

from .builders import output

CATALOG = {
    "orders": {"id": "INT", "customer_id": "INT", "total": "DECIMAL(10, 2)", "status": "TEXT"},
    "customers": {"id": "INT", "name": "TEXT", "region": "TEXT"},
}


def _floor(content: str, **contract: Any) -> list[tuple[str, str | None]]:
    parsed = OutputContract.model_validate_json(json.dumps(contract)) if contract else None
    return [(v.code, v.field) for v in check_floor(output("sql", content), parsed).violations]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("SELECT o.id FROM orders o JOIN customers o ON o.id = o.id", [("DuplicateAlias", "o")]),
        (
            "SELECT 1 FROM orders JOIN orders ON orders.id = orders.id",
            [("DuplicateAlias", "orders")],
        ),
        ("SELECT a.id FROM orders a JOIN orders b ON a.id = b.customer_id", []),
        (
            "SELECT x.id FROM (SELECT id FROM orders) x JOIN (SELECT id FROM customers) x ON 1 = 1",
            [("DuplicateAlias", "x")],
        ),
        # the same alias in two scopes (outer query and subquery) is fine
        ("SELECT o.id FROM orders o WHERE o.id IN (SELECT o.id FROM orders o)", []),
        ("SELECT status, COUNT(*) FROM orders GROUP BY 3", [("OrdinalOutOfRange", "GROUP BY")]),
        ("SELECT status, COUNT(*) FROM orders GROUP BY 1 ORDER BY 2 DESC", []),
        ("SELECT id FROM orders ORDER BY 0", [("OrdinalOutOfRange", "ORDER BY")]),
        ("SELECT id, total FROM orders ORDER BY 2, 3", [("OrdinalOutOfRange", "ORDER BY")]),
        ("SELECT * FROM orders ORDER BY 5", []),  # a star: the width is unknown here
        (
            "SELECT id FROM orders UNION SELECT id FROM customers ORDER BY 2",
            [("OrdinalOutOfRange", "ORDER BY")],
        ),
        ("SELECT id, name FROM customers UNION SELECT id, status FROM orders ORDER BY 2", []),
    ],
)
def test_alias_and_ordinal_errors_are_floor_violations(
    content: str, expected: list[tuple[str, str]]
) -> None:
    assert _floor(content) == expected


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("SELECT id, total FROM orders WHERE status = 'open'", []),
        ("SELECT o.id, c.name FROM orders o JOIN customers c ON o.customer_id = c.id", []),
        ("SELECT ID, Total FROM Orders", []),  # unquoted names are case-insensitive
        ("WITH big AS (SELECT id FROM orders WHERE total > 100) SELECT id FROM big", []),
        ("SELECT x FROM (SELECT id AS x FROM orders) AS s", []),
        ("SELECT id FROM refunds", [("UnknownTable", "refunds")]),
        ("SELECT o.id FROM orders o JOIN refunds r ON r.id = o.id", [("UnknownTable", "refunds")]),
        ("SELECT discount FROM orders", [("UnknownColumn", "discount")]),
        ("SELECT o.discount FROM orders o", [("UnknownColumn", "discount")]),
        (
            "SELECT id FROM orders JOIN customers ON customer_id = customers.id",
            [("AmbiguousColumn", "id")],
        ),
        (
            "CREATE TABLE refunds (id INT, amount INT); SELECT amount FROM refunds",
            [],
        ),
        (
            "CREATE TABLE refunds (id INT, amount INT); SELECT reason FROM refunds",
            [("UnknownColumn", "reason")],
        ),
    ],
)
def test_a_catalog_makes_unknown_and_ambiguous_names_floor_violations(
    content: str, expected: list[tuple[str, str]]
) -> None:
    assert _floor(content, catalog=CATALOG) == expected


def test_without_a_catalog_names_are_not_resolved() -> None:
    assert _floor("SELECT discount FROM refunds") == []


@pytest.mark.parametrize(
    "catalog",
    [
        {f"t{i}": {"a": "INT"} for i in range(501)},
        {"t": {f"c{i}": "INT" for i in range(501)}},
        {f"t{i}": {f"c{j}": "INT" for j in range(400)} for i in range(30)},
        {"t": {}},
        {"t": {"a": "x" * 65}},
        {"": {"a": "INT"}},
    ],
    ids=["tables", "columns", "total", "no_columns", "long_type", "empty_name"],
)
def test_catalog_size_and_shape_are_bounded_at_intake(catalog: dict[str, Any]) -> None:
    with pytest.raises(ValidationError) as info:
        OutputContract.model_validate_json(json.dumps({"catalog": catalog}))
    assert info.value.errors()[0]["loc"][0] == "catalog"


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT a FROM x JOIN y ON",  # sqlglot alone reads this as a cross join
        "SELECT a FROM x JOIN y USING",
        "SELECT a FROM x; SELECT b FROM x JOIN y ON",
    ],
)
def test_a_statement_cut_off_mid_clause_fails_the_floor(sql: str) -> None:
    floor = check_floor(output("sql", sql), None)
    assert [v.code for v in floor.violations] == ["SQLParseError"]
    assert "cut off mid-clause" in floor.violations[0].message


@pytest.mark.parametrize(
    "sql",
    ["SELECT a FROM x JOIN y ON x.id = y.id", "SELECT values FROM t", "SELECT 1;"],
)
def test_complete_statements_are_not_read_as_cut_off(sql: str) -> None:
    assert check_floor(output("sql", sql), None).passed


@pytest.mark.parametrize(
    ("sql", "line"),
    [
        ("SELECT CAST('2021-02-01' AS DATE", 1),  # sqlglot alone reads the CAST whole
        ("SELECT\n  tbl.cola + tbl.colb,\n  CAST(x AS SIGNED, /* comment */\n  y\nFROM bar", 3),
    ],
)
def test_a_bracket_left_open_fails_the_floor_where_it_opens(sql: str, line: int) -> None:
    floor = check_floor(output("sql", sql), None)
    assert [v.code for v in floor.violations] == ["SQLParseError"]
    assert "never closed" in floor.violations[0].message
    assert f"line {line}" in floor.violations[0].message


def test_brackets_in_strings_comments_and_quoted_names_are_not_counted() -> None:
    sql = "SELECT '(' AS opener, \"a)\" FROM t -- (\nWHERE f(x) > 0 /* ) */"
    assert check_floor(output("sql", sql), None).passed


def test_sql_the_parser_reads_as_a_bare_command_never_reaches_the_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """sqlglot quotes such SQL in a warning: node output must not reach the worker's log."""
    hostile = "SHOW TABLES -- \x1b[31mforged\nWARNING root: all reviews passed"
    with caplog.at_level(logging.DEBUG):
        assert _floor(hostile) == []
        assert _floor("VACUUM FULL orders") == []
    assert not [r for r in caplog.records if r.name.startswith("sqlglot")]
    assert "forged" not in caplog.text
    assert "VACUUM" not in caplog.text
