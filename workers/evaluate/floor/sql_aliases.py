"""The Floor for SQL: one name for two things in one SELECT.

Two FROM/JOIN sources known by one name (``FROM a t JOIN b t``) are an error in every
dialect but SQLite's. A source without an alias is known by its name as written, qualified
or not: ``FROM db1.a JOIN db2.a`` names two tables, which SQLite and MySQL tell apart by
their qualified names (``db1.a.id``), so it is no certain error.

Two select-list columns given one name (``SELECT u.id AS x, u.email AS x``) make every
later use of the name ambiguous (``ORDER BY x``, an outer query, a view or ``CREATE TABLE
AS``, which refuse it) and a reader that keys rows by column name keeps only one of the
two: an alias is written to name a column, and a second column with that name is a
defect. Only a name given by an explicit alias counts (``SELECT a.id, b.id`` is ordinary,
and so is one column repeated under its name, ``SELECT id AS id, id``, or under an alias
given earlier in the list, ``SELECT a + b AS f, f``, which dialects with lateral column
aliases read as the same column); unquoted names compare case-insensitively, as
identifiers do. A query that addresses every column of the shared name by position
(``SELECT a AS j, -b AS j ... GROUP BY 1, 2``) tells them apart itself and names them
alike on purpose, as sqlglot's own optimizer tests do.
"""

from __future__ import annotations

from collections import Counter

from sqlglot import exp

from schemas.stages import Violation, ViolationCode


def duplicate_aliases(select: exp.Select) -> list[Violation]:
    """Sources of one FROM clause, or columns of one select list, with one name."""
    return _duplicate_sources(select) + _duplicate_columns(select)


def _duplicate_sources(select: exp.Select) -> list[Violation]:
    sources = [select.args["from_"].this] if select.args.get("from_") else []
    sources.extend(join.this for join in select.args.get("joins") or ())
    names = Counter(_source_name(s) for s in sources)
    return [
        Violation(
            code=ViolationCode.DUPLICATE_ALIAS,
            message=f"{name!r} names {count} sources in one FROM clause; each needs its own alias",
            field=name,
        )
        for name, count in names.items()
        if name and count > 1
    ]


def _source_name(source: exp.Expr) -> str:
    """The name a FROM or JOIN source is known by in its scope ('' when it has none)."""
    if isinstance(source, exp.Table) and not source.alias:
        return ".".join(part.name for part in source.parts).casefold()
    alias = source.args.get("alias")
    if isinstance(alias, exp.TableAlias) and alias.this is not None:
        return alias.name if alias.this.args.get("quoted") else alias.name.casefold()
    return ""


def _duplicate_columns(select: exp.Select) -> list[Violation]:
    names: Counter[str] = Counter()
    aliased: set[str] = set()
    meanings: dict[str, set[str]] = {}
    positions: dict[str, set[int]] = {}
    for position, projection in enumerate(select.expressions, 1):
        name = _column_name(projection)
        if name:
            names[name] += 1
            inner = projection.this if isinstance(projection, exp.Alias) else projection
            if not _lateral(projection, name, aliased):
                meanings.setdefault(name, set()).add(inner.sql().casefold())
            positions.setdefault(name, set()).add(position)
            if isinstance(projection, exp.Alias):
                aliased.add(name)
    by_position = _ordinals(select)
    return [
        Violation(
            code=ViolationCode.DUPLICATE_ALIAS,
            message=f"{name!r} names {count} columns of one select list; "
            "give each column its own name",
            field=name,
        )
        for name, count in names.items()
        if count > 1
        and name in aliased
        and len(meanings[name]) > 1
        and not positions[name] <= by_position
    ]


def _lateral(projection: exp.Expr, name: str, aliased: set[str]) -> bool:
    """Whether ``projection`` is a bare, unqualified column naming an alias given before it.

    Where a dialect reads lateral column aliases (``SELECT a + b AS f, f``), it is that
    column again; elsewhere it is a column of the source that the writer named so.
    """
    return isinstance(projection, exp.Column) and not projection.table and name in aliased


def _ordinals(select: exp.Select) -> set[int]:
    """The columns the SELECT's own GROUP BY and ORDER BY address by position."""
    found: set[int] = set()
    for clause in (select.args.get("group"), select.args.get("order")):
        for item in clause.expressions if clause is not None else ():
            node = item.this if isinstance(item, exp.Ordered) else item
            if isinstance(node, exp.Literal) and node.is_int:
                found.add(int(node.name))
    return found


def _column_name(projection: exp.Expr) -> str:
    """The name a select-list column is known by ('' for a star or an unnamed expression)."""
    if isinstance(projection, exp.Alias):
        identifier = projection.args.get("alias")
    elif isinstance(projection, exp.Column) and not isinstance(projection.this, exp.Star):
        identifier = projection.this
    else:
        return ""
    if not isinstance(identifier, exp.Identifier) or not identifier.name:
        return ""
    return identifier.name if identifier.args.get("quoted") else identifier.name.casefold()
