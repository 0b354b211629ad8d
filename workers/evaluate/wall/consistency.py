"""Wall, consistency: does the output contradict itself?"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from collections.abc import Iterator
from itertools import islice
from typing import Any

from schemas.quality import Dimension
from schemas.request import NodeOutput, OutputKind
from schemas.stages import IssueCode
from workers.evaluate.findings import Finding, finding, sentences
from workers.evaluate.parsed import ParseFailure, json_document, json_nodes, python_tree
from workers.evaluate.wall.consistency_sql import sql_contradictions
from workers.evaluate.wall.filler import prose_text
from workers.evaluate.wall.self_consistency import self_contradictions

_C = Dimension.CONSISTENCY
#: The look-ahead of first letters spares the engine the alternation at most positions.
_NEGATIONS = re.compile(
    r"\b(?=[acdimnsw])(?:not|no|never|cannot|can't|doesn't|don't|isn't|aren't|won't|"
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
    r"\b(?=[chtw])(?:there (?:are|were|is)|we have|contains?|has|have)\s+(\d+)\s+(\w+)", re.I
)
_COUNT_KEYS = re.compile(r"^(?:count|total|n|num|number)(?:_(\w+))?$|^(\w+)_count$", re.I)
#: A sentence whose claim holds only under a condition, or that asks: its negation
#: elsewhere ("if the flag is not set, ...") does not contradict it.
_HEDGED = re.compile(
    r"\?|\b(?=[eiouw])(?:if|unless|when|whether|otherwise|only|until|except)\b", re.I
)
#: Decorators that define a name again on purpose (property parts, overloads, dispatch).
_REDEFINING_DECORATORS = {"setter", "getter", "deleter", "overload", "register"}


def check_consistency(output: NodeOutput) -> list[Finding]:
    """Contradicting sentences, conflicting quantities, counts that disagree with lists.

    In prose, also opposite statements about one subject, universal claims a count
    denies and counts the listed items deny (``self_consistency``).
    """
    if output.kind in (OutputKind.TEXT, OutputKind.MARKDOWN):
        return _prose(output.content)
    if output.kind is OutputKind.JSON:
        return _json_counts(output.content)
    if output.kind is OutputKind.PYTHON:
        return _python_redefinitions(output.content)
    if output.kind is OutputKind.SQL:
        return sql_contradictions(output.content)
    return []


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
    for sentence in sentences(prose_text(content)):
        if len(sentence) > 400 or _HEDGED.search(sentence):
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
                    IssueCode.CONTRADICTION,
                    f"{plain[key]!r} contradicts {sentence!r}",
                    0.45,
                    fix="Decide which statement is true and remove the other",
                )
            )
    found.extend(_quantities(content))
    known = {f.issue.code for f in found}
    found.extend(f for f in self_contradictions(content) if f.issue.code not in known)
    return found[:6]


def _quantities(content: str) -> list[Finding]:
    seen: dict[str, set[str]] = defaultdict(set)
    for number, noun in _QUANTITY.findall(prose_text(content)):
        seen[noun.lower().rstrip("s")].add(number)
    return [
        finding(
            _C,
            IssueCode.CONFLICTING_QUANTITY,
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
    return list(islice(_count_mismatches(document), 6))


def _count_mismatches(document: Any) -> Iterator[Finding]:
    for path, node in json_nodes(document, max_depth=40, per_list=1000):
        if not isinstance(node, dict):
            continue
        lists = {k: v for k, v in node.items() if isinstance(v, list)}
        for key, value in node.items():
            match = _COUNT_KEYS.match(key)
            if match and isinstance(value, int) and not isinstance(value, bool) and lists:
                stem = match.group(1) or match.group(2)
                target = _matching_list(stem, lists)
                if target is not None and len(lists[target]) != value:
                    yield finding(
                        _C,
                        IssueCode.COUNT_MISMATCH,
                        f"{key} is {value} but {target} has {len(lists[target])} items",
                        0.45,
                        field=f"{path}.{key}",
                        fix=f"Make {key} equal the length of {target}",
                    )


def _matching_list(stem: str | None, lists: dict[str, list[Any]]) -> str | None:
    if stem is not None:
        for name in lists:
            if name.lower().rstrip("s") == stem.lower().rstrip("s"):
                return name
        return None
    return next(iter(lists)) if len(lists) == 1 else None


def _python_redefinitions(content: str) -> list[Finding]:
    """A function or class defined twice in one body, the first never used in between.

    Module and class bodies, as Python runs them: a definition under ``if``/``try`` is a
    different body (conditional definitions are alternatives), and a redefinition the
    first one feeds (``@x.setter``, ``@f.register``, ``f = wrap(f)`` in between) or that
    declares an overload is intended.
    """
    tree = python_tree(content)
    if isinstance(tree, ParseFailure):
        return []
    found: list[Finding] = []
    bodies = [tree.body] + [n.body for n in tree.body if isinstance(n, ast.ClassDef)]
    for body in bodies:
        found.extend(_redefined_in(body))
    return found[:6]


def _redefined_in(body: list[ast.stmt]) -> list[Finding]:
    found: list[Finding] = []
    seen: dict[str, int] = {}
    for index, node in enumerate(body):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        first = seen.get(node.name)
        seen[node.name] = index
        if first is None or _intended(node, body[first], body[first + 1 : index]):
            continue
        found.append(
            finding(
                _C,
                IssueCode.REDEFINITION,
                f"{node.name} is defined twice; the first is dead",
                0.35,
                field=node.name,
                fix=f"Keep one definition of {node.name}",
            )
        )
    return found


def _intended(
    again: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef,
    first: ast.stmt,
    between: list[ast.stmt],
) -> bool:
    decorators = [*again.decorator_list, *getattr(first, "decorator_list", ())]
    if any(_last_name(d) in _REDEFINING_DECORATORS for d in decorators):
        return True
    uses = [*between, *(ast.Expr(d) for d in again.decorator_list)]
    return any(
        isinstance(n, ast.Name) and n.id == again.name and isinstance(n.ctx, ast.Load)
        for statement in uses
        for n in ast.walk(statement)
    )


def _last_name(node: ast.expr) -> str:
    if isinstance(node, ast.Call):
        return _last_name(node.func)
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""
