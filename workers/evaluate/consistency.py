"""Wall, consistency: does the output contradict itself?"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from typing import Any

from sqlglot import exp

from schemas.quality import Dimension
from schemas.request import NodeOutput, OutputKind
from workers.evaluate.findings import Finding, finding, sentences
from workers.evaluate.parsed import ParseFailure, json_document, python_tree, sql_statements

_C = Dimension.CONSISTENCY
_NEGATIONS = re.compile(
    r"\b(?:not|no|never|cannot|can't|doesn't|don't|isn't|aren't|won't|"
    r"wasn't|weren't|shouldn't|mustn't)\b",
    re.I,
)
_NEGATION_STEMS = {
    "cannot": "can",
    "can't": "can",
    "doesn't": "does",
    "don't": "do",
    "isn't": "is",
    "aren't": "are",
    "won't": "will",
    "wasn't": "was",
    "weren't": "were",
    "shouldn't": "should",
    "mustn't": "must",
    "never": "always",
}
_QUANTITY = re.compile(
    r"\b(?:there (?:are|were|is)|we have|contains?|has|have)\s+(\d+)\s+(\w+)", re.I
)
_COUNT_KEYS = re.compile(r"^(?:count|total|n|num|number)(?:_(\w+))?$|^(\w+)_count$", re.I)


def check_consistency(output: NodeOutput) -> list[Finding]:
    """Contradicting sentences, conflicting quantities, counts that disagree with lists."""
    if output.kind in (OutputKind.TEXT, OutputKind.MARKDOWN):
        return _prose(output.content)
    if output.kind is OutputKind.JSON:
        return _json_counts(output.content)
    if output.kind is OutputKind.PYTHON:
        return _python_redefinitions(output.content)
    return _sql_conflicting_filters(output.content)


def _normalise(sentence: str) -> str:
    return re.sub(r"[^a-z0-9 ]", "", sentence.lower()).strip()


def _affirmative(sentence: str) -> str:
    """The sentence with its negations removed, for pairing with its opposite."""

    def repl(match: re.Match[str]) -> str:
        return _NEGATION_STEMS.get(match.group(0).lower(), "")

    return re.sub(r"\s+", " ", _normalise(_NEGATIONS.sub(repl, sentence.lower())))


def _prose(content: str) -> list[Finding]:
    found: list[Finding] = []
    plain: dict[str, str] = {}
    negated: dict[str, str] = {}
    for sentence in sentences(content):
        if len(sentence) > 400:
            continue
        key = _affirmative(sentence)
        if len(key.split()) < 3:
            continue
        (negated if _NEGATIONS.search(sentence) else plain).setdefault(key, sentence)
    for key, sentence in negated.items():
        if key in plain:
            found.append(
                finding(
                    _C,
                    "Contradiction",
                    f"{plain[key]!r} contradicts {sentence!r}",
                    0.45,
                    fix="Decide which statement is true and remove the other",
                )
            )
    found.extend(_quantities(content))
    return found[:6]


def _quantities(content: str) -> list[Finding]:
    seen: dict[str, set[str]] = defaultdict(set)
    for number, noun in _QUANTITY.findall(content):
        seen[noun.lower().rstrip("s")].add(number)
    return [
        finding(
            _C,
            "ConflictingQuantity",
            f"the number of {noun}s is given as {', '.join(sorted(numbers))}",
            0.45,
            fix=f"State one number of {noun}s",
        )
        for noun, numbers in seen.items()
        if len(numbers) > 1
    ]


def _json_counts(content: str) -> list[Finding]:
    document = json_document(content)
    if isinstance(document, ParseFailure):
        return []
    found: list[Finding] = []
    _walk_counts(document, "$", found, 0)
    return found[:6]


def _walk_counts(node: Any, path: str, found: list[Finding], depth: int) -> None:
    if depth > 40:
        return
    if isinstance(node, dict):
        lists = {k: v for k, v in node.items() if isinstance(v, list)}
        for key, value in node.items():
            match = _COUNT_KEYS.match(key)
            if match and isinstance(value, int) and not isinstance(value, bool) and lists:
                stem = match.group(1) or match.group(2)
                target = _matching_list(stem, lists)
                if target is not None and len(lists[target]) != value:
                    found.append(
                        finding(
                            _C,
                            "CountMismatch",
                            f"{key} is {value} but {target} has {len(lists[target])} items",
                            0.45,
                            field=f"{path}.{key}",
                            fix=f"Make {key} equal the length of {target}",
                        )
                    )
        for key, value in node.items():
            _walk_counts(value, f"{path}.{key}", found, depth + 1)
    elif isinstance(node, list):
        for index, value in enumerate(node[:1000]):
            _walk_counts(value, f"{path}[{index}]", found, depth + 1)


def _matching_list(stem: str | None, lists: dict[str, list[Any]]) -> str | None:
    if stem is not None:
        for name in lists:
            if name.lower().rstrip("s") == stem.lower().rstrip("s"):
                return name
        return None
    return next(iter(lists)) if len(lists) == 1 else None


def _python_redefinitions(content: str) -> list[Finding]:
    tree = python_tree(content)
    if isinstance(tree, ParseFailure):
        return []
    seen: set[str] = set()
    found: list[Finding] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if node.name in seen:
                found.append(
                    finding(
                        _C,
                        "Redefinition",
                        f"{node.name} is defined twice; the first is dead",
                        0.35,
                        field=node.name,
                        fix=f"Keep one definition of {node.name}",
                    )
                )
            seen.add(node.name)
    return found


def _sql_conflicting_filters(content: str) -> list[Finding]:
    statements = sql_statements(content)
    if isinstance(statements, ParseFailure):
        return []
    found: list[Finding] = []
    for statement in statements:
        for where in statement.find_all(exp.Where):
            values: dict[str, set[str]] = defaultdict(set)
            for eq in _conjuncts(where.this):
                if (
                    isinstance(eq, exp.EQ)
                    and isinstance(eq.left, exp.Column)
                    and isinstance(eq.right, exp.Literal)
                ):
                    values[eq.left.sql()].add(eq.right.sql())
            found.extend(
                finding(
                    _C,
                    "ContradictoryFilter",
                    f"{column} must equal {' and '.join(sorted(v))} at once: no row matches",
                    0.5,
                    field=column,
                    fix=f"Use IN (...) or one value for {column}",
                )
                for column, v in values.items()
                if len(v) > 1
            )
    return found


def _conjuncts(node: exp.Expr) -> list[exp.Expr]:
    if isinstance(node, exp.And):
        return _conjuncts(node.left) + _conjuncts(node.right)
    if isinstance(node, exp.Paren):
        return _conjuncts(node.this)
    return [node]
