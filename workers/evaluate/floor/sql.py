"""The Floor for SQL that parses: what a database would refuse before running it.

Duplicate names in one SELECT (two sources, or two aliased columns: ``sql_aliases``) and
GROUP BY / ORDER BY ordinals past the select list are errors. With a catalog in the
contract, sqlglot's own optimizer (``qualify`` with ``validate_qualify_columns``)
resolves every column: unknown tables and columns and ambiguous unqualified columns are
refused here, as the database would refuse them, instead of being found by the node
downstream.
"""

from __future__ import annotations

import re

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.qualify import qualify
from sqlglot.schema import MappingSchema

from schemas.stages import Violation, ViolationCode
from workers.evaluate.floor.sql_aliases import duplicate_aliases

#: A catalog as the contract carries it: table -> column -> type.
Catalog = dict[str, dict[str, str]]

_QUOTED_NAME = re.compile(r"Column '([^']+)'|Unknown column: (\S+)|Unknown table: (\S+)")


def sql_violations(statements: tuple[exp.Expr, ...], catalog: Catalog | None) -> list[Violation]:
    """Alias and ordinal errors in every statement; catalog errors when there is a catalog."""
    found: list[Violation] = []
    for statement in statements:
        for select in statement.find_all(exp.Select):
            found.extend(duplicate_aliases(select))
            found.extend(_ordinals(select))
        for union in statement.find_all(exp.SetOperation):
            found.extend(_set_ordinals(union))
    if catalog is not None:
        found.extend(_catalog_violations(statements, catalog))
    return found[:20]


def _ordinals(select: exp.Select) -> list[Violation]:
    width = _width(select)
    if width is None:
        return []
    found = []
    for clause, node in (("GROUP BY", select.args.get("group")), ("ORDER BY", _own_order(select))):
        found.extend(_out_of_range(clause, node, width))
    return found


def _set_ordinals(union: exp.SetOperation) -> list[Violation]:
    leftmost: exp.Expr = union
    while isinstance(leftmost, exp.SetOperation):
        leftmost = leftmost.left
    width = _width(leftmost) if isinstance(leftmost, exp.Select) else None
    if width is None:
        return []
    return _out_of_range("ORDER BY", union.args.get("order"), width)


def _own_order(select: exp.Select) -> exp.Expr | None:
    """A SELECT's ORDER BY, unless the SELECT is a branch of a UNION (the union owns it)."""
    return None if isinstance(select.parent, exp.SetOperation) else select.args.get("order")


def _width(select: exp.Select) -> int | None:
    """How many columns the select list yields; None when a star makes it unknown."""
    columns = select.expressions
    if any(_is_star(c) for c in columns):
        return None
    return len(columns)


def _is_star(projection: exp.Expr) -> bool:
    """``*`` or ``t.*`` (``COUNT(*)`` is one column)."""
    node = projection.this if isinstance(projection, exp.Alias) else projection
    return isinstance(node, exp.Star) or (
        isinstance(node, exp.Column) and isinstance(node.this, exp.Star)
    )


def _out_of_range(clause: str, node: exp.Expr | None, width: int) -> list[Violation]:
    if node is None:
        return []
    items = [i.this if isinstance(i, exp.Ordered) else i for i in node.expressions]
    return [
        Violation(
            code=ViolationCode.ORDINAL_OUT_OF_RANGE,
            message=f"{clause} {item.name} refers to column {item.name}, "
            f"but the select list has {width}",
            field=clause,
        )
        for item in items
        if isinstance(item, exp.Literal) and item.is_int and not 1 <= int(item.name) <= width
    ]


def _catalog_violations(statements: tuple[exp.Expr, ...], catalog: Catalog) -> list[Violation]:
    tables = dict(catalog)
    opaque: set[str] = set()  # created here without declared columns (views, CREATE ... AS)
    found: list[Violation] = []
    for statement in statements:
        target = _created_table(statement)
        unknown = _unknown_tables(statement, {t.casefold() for t in tables} | opaque, target)
        found.extend(unknown)
        if target is not None:
            columns = _declared_columns(statement)
            if columns:
                tables[target.name] = columns
            else:
                opaque.add(target.name.casefold())
        read = {t.name.casefold() for t in statement.find_all(exp.Table)}
        if unknown or read & opaque or not isinstance(statement, exp.Query):
            continue
        found.extend(_qualify(statement, tables))
    return found


def _qualify(statement: exp.Expr, tables: Catalog) -> list[Violation]:
    try:
        schema = MappingSchema(dict[str, object](tables))
        qualify(statement.copy(), schema=schema, validate_qualify_columns=True)
    except SqlglotError as exc:
        return [_column_violation(str(exc), statement, tables)]
    except Exception as exc:  # sqlglot's own bugs on odd input must not crash a worker
        return [
            Violation(
                code=ViolationCode.UNKNOWN_COLUMN,
                message="the SQL could not be resolved against the catalog: "
                f"{type(exc).__name__}: {exc}"[:300],
            )
        ]
    return []


def _created_table(statement: exp.Expr) -> exp.Table | None:
    """The table or view a CREATE statement defines."""
    if not isinstance(statement, exp.Create):
        return None
    target = statement.this
    if isinstance(target, exp.Schema):
        target = target.this
    return target if isinstance(target, exp.Table) else None


def _declared_columns(statement: exp.Expr) -> dict[str, str]:
    schema = statement.this
    if not isinstance(schema, exp.Schema):
        return {}
    return {
        column.name: column.args["kind"].sql() if column.args.get("kind") else "UNKNOWN"
        for column in schema.expressions
        if isinstance(column, exp.ColumnDef)
    }


def _unknown_tables(
    statement: exp.Expr, known: set[str], target: exp.Table | None
) -> list[Violation]:
    defined = {cte.alias.casefold() for cte in statement.find_all(exp.CTE)}
    names = {
        table.name
        for table in statement.find_all(exp.Table)
        if table.name and table is not target and table.name.casefold() not in known | defined
    }
    return [
        Violation(
            code=ViolationCode.UNKNOWN_TABLE,
            message=f"table {name!r} is not in the contract's catalog",
            field=name,
        )
        for name in sorted(names)
    ]


def _column_violation(message: str, statement: exp.Expr, catalog: Catalog) -> Violation:
    match = _QUOTED_NAME.search(message)
    name = next((g for g in match.groups() if g), "") if match else ""
    tables = {t.name.casefold() for t in statement.find_all(exp.Table)}
    holders = [
        table
        for table, columns in catalog.items()
        if table.casefold() in tables and name.casefold() in {c.casefold() for c in columns}
    ]
    if len(holders) > 1:
        return Violation(
            code=ViolationCode.AMBIGUOUS_COLUMN,
            message=f"column {name!r} is in {', '.join(sorted(holders))}: qualify it",
            field=name,
        )
    if match is not None and match.group(3):
        return Violation(
            code=ViolationCode.UNKNOWN_TABLE,
            message=f"{name!r} names no table or alias in scope",
            field=name,
        )
    return Violation(
        code=ViolationCode.UNKNOWN_COLUMN,
        message=f"{message.splitlines()[0][:200]} against the contract's catalog",
        field=name or None,
    )
