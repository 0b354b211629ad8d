"""Mutation operators that turn a good SQL statement into a realistic defective output.

Deterministic, and independent of the engine under test. Each returns ``None`` when it
does not apply (the harness counts those). Statements that need rewriting are rebuilt
from sqlglot's tree and printed with its default dialect.

- ``truncated`` (floor): the statement stops right after its last clause keyword or
  connective that needs an operand (``SELECT``, ``FROM``, ``JOIN``, ``ON``, ``WHERE``,
  ``AND``, ``OR``, ``GROUP BY``, ``ORDER BY``, ``HAVING``) that is not already the end:
  invalid in every SQL grammar, whatever parser reads it.
- ``contradictory_range`` (reject): ``AND c > 5 AND c < 4`` on the first column of a
  SELECT's WHERE: a filter no row can pass.
- ``duplicate_alias`` (floor): the second table of a SELECT's FROM/JOINs gets the first
  table's alias (an error in every mainstream engine).
- ``group_by_ordinal`` (floor): ``GROUP BY <n+1>`` on a SELECT with ``n`` explicit
  columns (Postgres: "GROUP BY position is not in select list").

- ``unknown_column`` (floor; only when the contract carries a catalog): the first column
  the statement reads that the catalog declares is renamed to a plausible column that
  exists nowhere: its table prefix dropped (``l_quantity`` -> ``quantity``, the usual
  slip with TPC names), else ``_total`` appended; a name found anywhere in the catalog or
  the statement's text (as a whole word) is never used.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from enum import StrEnum

import sqlglot
from sqlglot import TokenType, exp
from sqlglot.errors import SqlglotError
from sqlglot.tokens import Tokenizer

from bench.public.case import Expect


class SqlDefect(StrEnum):
    """The SQL defect classes, named after the operator that makes them."""

    TRUNCATED = "truncated"
    CONTRADICTORY_RANGE = "contradictory_range"
    DUPLICATE_ALIAS = "duplicate_alias"
    GROUP_BY_ORDINAL = "group_by_ordinal"
    UNKNOWN_COLUMN = "unknown_column"


#: A catalog as the request contract carries it: table -> column -> type.
Catalog = dict[str, dict[str, str]]

EXPECT: dict[SqlDefect, Expect] = {
    SqlDefect.TRUNCATED: Expect.FLOOR,
    SqlDefect.CONTRADICTORY_RANGE: Expect.REJECT,
    SqlDefect.DUPLICATE_ALIAS: Expect.FLOOR,
    SqlDefect.GROUP_BY_ORDINAL: Expect.FLOOR,
    SqlDefect.UNKNOWN_COLUMN: Expect.FLOOR,
}

_DANGLING = frozenset(
    {
        TokenType.SELECT,
        TokenType.FROM,
        TokenType.JOIN,
        TokenType.ON,
        TokenType.WHERE,
        TokenType.AND,
        TokenType.OR,
        TokenType.GROUP_BY,
        TokenType.ORDER_BY,
        TokenType.HAVING,
    }
)


def truncated(sql: str, tree: exp.Expression) -> str | None:
    """Cut right after the last keyword that needs an operand."""
    try:
        tokens = Tokenizer().tokenize(sql)
    except SqlglotError:
        return None
    cuts = [t.end + 1 for i, t in enumerate(tokens[:-1]) if t.token_type in _DANGLING]
    cuts = [c for c in cuts if sql[c:].strip(" \n\t;")]
    return sql[: cuts[-1]] if cuts else None


def contradictory_range(sql: str, tree: exp.Expression) -> str | None:
    """``AND c > 5 AND c < 4`` on the first column the WHERE reads."""
    where = tree.args.get("where") if isinstance(tree, exp.Select) else None
    column = next(iter(where.find_all(exp.Column)), None) if where else None
    if where is None or column is None:
        return None
    mutated = tree.copy()
    condition = mutated.args["where"].this
    if isinstance(condition, exp.Connector):
        condition = exp.Paren(this=condition)
    bounds = exp.and_(
        exp.GT(this=column.copy(), expression=exp.Literal.number(5)),
        exp.LT(this=column.copy(), expression=exp.Literal.number(4)),
    )
    mutated.set("where", exp.Where(this=exp.and_(condition, bounds)))
    return mutated.sql()


def duplicate_alias(sql: str, tree: exp.Expression) -> str | None:
    """Give the second table the first table's alias."""
    if not isinstance(tree, exp.Select):
        return None
    sources = [tree.args.get("from_") or tree.args.get("from")]
    sources += list(tree.args.get("joins") or [])
    tables = [s.this for s in sources if s is not None and isinstance(s.this, exp.Table)]
    if len(tables) < 2 or tables[0].alias_or_name == tables[1].alias_or_name:
        return None
    mutated = tree.copy()
    copies = [t for t in mutated.find_all(exp.Table) if t.parent_select is mutated]
    if len(copies) < 2:
        return None
    copies[1].set("alias", exp.TableAlias(this=exp.to_identifier(tables[0].alias_or_name)))
    return mutated.sql()


def group_by_ordinal(sql: str, tree: exp.Expression) -> str | None:
    """``GROUP BY <n+1>`` on a SELECT of ``n`` explicit columns."""
    if not isinstance(tree, exp.Select) or any(e.is_star for e in tree.expressions):
        return None
    mutated = tree.copy()
    ordinal = exp.Literal.number(len(tree.expressions) + 1)
    group = mutated.args.get("group")
    keys = [*group.expressions, ordinal] if group else [ordinal]
    mutated.set("group", exp.Group(expressions=keys))
    return mutated.sql()


def unknown_column(sql: str, tree: exp.Expression, catalog: Catalog) -> str | None:
    """Rename the first catalogued column the statement reads to one that exists nowhere."""
    declared = {c.casefold() for columns in catalog.values() for c in columns}
    text = sql.casefold()
    columns = list(tree.find_all(exp.Column))
    for position, column in enumerate(columns):
        name = column.name
        if name.casefold() not in declared:
            continue
        for new in (name.partition("_")[2], f"{name}_total"):
            used = re.search(rf"\b{re.escape(new.casefold())}\b", text)
            if new and new.casefold() not in declared and not used:
                mutated = tree.copy()
                list(mutated.find_all(exp.Column))[position].set("this", exp.to_identifier(new))
                return mutated.sql()
    return None


Operator = Callable[[str, exp.Expression], "str | None"]

OPERATORS: dict[SqlDefect, Operator] = {
    SqlDefect.TRUNCATED: truncated,
    SqlDefect.CONTRADICTORY_RANGE: contradictory_range,
    SqlDefect.DUPLICATE_ALIAS: duplicate_alias,
    SqlDefect.GROUP_BY_ORDINAL: group_by_ordinal,
}


def parse_statement(sql: str) -> exp.Expression | None:
    """The single statement ``sql`` holds, parsed with the default dialect, else None."""
    try:
        trees = [t for t in sqlglot.parse(sql) if isinstance(t, exp.Expression)]
    except (SqlglotError, RecursionError, ValueError):
        return None
    return trees[0] if len(trees) == 1 else None
