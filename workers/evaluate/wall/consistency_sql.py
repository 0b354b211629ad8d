"""Wall, consistency for SQL: a filter no row can satisfy.

``status = 'open' AND status = 'closed'``, ``x > 5 AND x < 4``, ``x >= 3 AND x < 3`` and
``x BETWEEN 5 AND 1`` are valid SQL that always returns nothing: the query contradicts
itself. Only conjuncts are compared (a disjunction may legitimately mix ranges), and
ranges only over numbers, whose order every dialect agrees on.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from sqlglot import exp

from schemas.quality import Dimension
from schemas.stages import IssueCode
from workers.evaluate.findings import Finding, finding
from workers.evaluate.parsed import ParseFailure, sql_statements

_FLIP: dict[type[exp.Expr], type[exp.Expr]] = {
    exp.GT: exp.LT,
    exp.GTE: exp.LTE,
    exp.LT: exp.GT,
    exp.LTE: exp.GTE,
    exp.EQ: exp.EQ,
}


@dataclass
class _Bounds:
    """What the conjuncts of one filter require of one column."""

    equals: set[str] = field(default_factory=set)  # string literals it must equal
    numbers: set[float] = field(default_factory=set)  # numbers it must equal
    low: tuple[float, bool] | None = None  # (value, inclusive)
    high: tuple[float, bool] | None = None

    def raise_low(self, value: float, inclusive: bool) -> None:
        if self.low is None or value > self.low[0] or (value == self.low[0] and not inclusive):
            self.low = (value, inclusive)

    def lower_high(self, value: float, inclusive: bool) -> None:
        if self.high is None or value < self.high[0] or (value == self.high[0] and not inclusive):
            self.high = (value, inclusive)

    def empty(self) -> bool:
        if len(self.equals) > 1 or len(self.numbers) > 1:
            return True
        if self.low is not None and self.high is not None:
            (lo, lo_in), (hi, hi_in) = self.low, self.high
            if lo > hi or (lo == hi and not (lo_in and hi_in)):
                return True
        return any(not self._admits(n) for n in self.numbers)

    def _admits(self, value: float) -> bool:
        low_ok = self.low is None or value > self.low[0] or (value == self.low[0] and self.low[1])
        high_ok = (
            self.high is None or value < self.high[0] or (value == self.high[0] and self.high[1])
        )
        return low_ok and high_ok

    def describe(self) -> str:
        parts = [f"= {v}" for v in sorted(self.equals)]
        parts.extend(f"= {v:g}" for v in sorted(self.numbers))
        if self.low is not None:
            parts.append(f"{'>=' if self.low[1] else '>'} {self.low[0]:g}")
        if self.high is not None:
            parts.append(f"{'<=' if self.high[1] else '<'} {self.high[0]:g}")
        return " and ".join(parts)


def sql_contradictions(content: str) -> list[Finding]:
    """Columns whose conjunctive filters (WHERE, HAVING, JOIN ON) admit no value."""
    statements = sql_statements(content)
    if isinstance(statements, ParseFailure):
        return []
    found: list[Finding] = []
    for statement in statements:
        for clause in _filters(statement):
            bounds: dict[str, _Bounds] = defaultdict(_Bounds)
            for condition in _conjuncts(clause):
                _constrain(condition, bounds)
            found.extend(
                finding(
                    Dimension.CONSISTENCY,
                    IssueCode.CONTRADICTORY_FILTER,
                    f"{column} must be {b.describe()} at once: no row matches",
                    0.5,
                    field=column,
                    fix=f"Fix the bounds on {column}, or use IN (...) or OR for alternatives",
                )
                for column, b in bounds.items()
                if b.empty()
            )
    return found[:6]


def _filters(statement: exp.Expr) -> list[exp.Expr]:
    clauses: list[exp.Expr] = [w.this for w in statement.find_all(exp.Where, exp.Having)]
    clauses.extend(
        j.args["on"] for j in statement.find_all(exp.Join) if j.args.get("on") is not None
    )
    return clauses


def _conjuncts(node: exp.Expr) -> list[exp.Expr]:
    if isinstance(node, exp.And):
        return _conjuncts(node.left) + _conjuncts(node.right)
    if isinstance(node, exp.Paren):
        return _conjuncts(node.this)
    return [node]


def _constrain(condition: exp.Expr, bounds: dict[str, _Bounds]) -> None:
    if isinstance(condition, exp.Between) and isinstance(condition.this, exp.Column):
        low, high = _number(condition.args.get("low")), _number(condition.args.get("high"))
        column = bounds[_key(condition.this)]
        if low is not None:
            column.raise_low(low, True)
        if high is not None:
            column.lower_high(high, True)
        return
    kind = type(condition)
    if kind not in _FLIP:
        return
    left, right = condition.args.get("this"), condition.args.get("expression")
    if isinstance(right, exp.Column) and isinstance(left, exp.Literal | exp.Neg):
        left, right, kind = right, left, _FLIP[kind]
    if not isinstance(left, exp.Column) or not isinstance(right, exp.Literal | exp.Neg):
        return
    column = bounds[_key(left)]
    value = _number(right)
    if kind is exp.EQ:
        if value is not None:
            column.numbers.add(value)
        elif isinstance(right, exp.Literal) and right.is_string:
            column.equals.add(right.sql())
    elif value is not None:
        if kind in (exp.GT, exp.GTE):
            column.raise_low(value, kind is exp.GTE)
        else:
            column.lower_high(value, kind is exp.LTE)


def _key(column: exp.Column) -> str:
    return column.sql().casefold()


def _number(node: exp.Expr | None) -> float | None:
    if isinstance(node, exp.Neg):
        inner = _number(node.this)
        return None if inner is None else -inner
    if not isinstance(node, exp.Literal) or node.is_string:
        return None
    try:
        return float(node.name)
    except ValueError:
        return None
