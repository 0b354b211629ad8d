"""Wall, substance: is there meaningful content of a sensible length, or only filler?"""

from __future__ import annotations

import ast
import re
from collections import Counter
from typing import Any

from schemas.quality import Dimension
from schemas.request import NodeOutput, OutputKind
from workers.evaluate.findings import Finding, finding, words
from workers.evaluate.parsed import ParseFailure, json_document, python_tree

_FILLER = re.compile(
    r"lorem ipsum|\bdolor sit amet\b|\bTODO\b|\bTBD\b|\bFIXME\b|\bplaceholder\b|"
    r"\binsert (?:text|content|here)\b|\[insert [^\]\n]{0,80}\]|\bas an ai\b|"
    r"\bcontent goes here\b|\bxxx+\b|"
    r"\bblah\b|\betc\.? etc\b|\bsample text\b",
    re.I,
)
#: Characters a useful output of each kind usually has at least / at most.
EXPECTED_CHARS: dict[OutputKind, tuple[int, int]] = {
    OutputKind.TEXT: (40, 60_000),
    OutputKind.MARKDOWN: (60, 80_000),
    OutputKind.PYTHON: (15, 120_000),
    OutputKind.JSON: (2, 150_000),
    OutputKind.SQL: (8, 40_000),
}
_S = Dimension.SUBSTANCE


def check_substance(output: NodeOutput) -> list[Finding]:
    """Filler, repetition, placeholders, and length against what the kind usually needs."""
    found = _length_fit(output)
    found.extend(_filler(output.content))
    if output.kind in (OutputKind.TEXT, OutputKind.MARKDOWN):
        found.extend(_repetition(output.content))
    elif output.kind is OutputKind.PYTHON:
        found.extend(_python_stubs(output.content))
    elif output.kind is OutputKind.JSON:
        found.extend(_json_emptiness(output.content))
    return found


def _length_fit(output: NodeOutput) -> list[Finding]:
    low, high = EXPECTED_CHARS[output.kind]
    size = len(output.content.strip())
    if size < low:
        return [
            finding(
                _S,
                "TooThin",
                f"{size} characters; a {output.kind} output usually has at least {low}",
                0.5,
                fix="Provide the full content the task asks for",
            )
        ]
    if size > high:
        return [
            finding(
                _S,
                "Bloated",
                f"{size} characters; more than the usual {high}",
                0.2,
                fix="Cut repetition and material the task did not ask for",
            )
        ]
    return []


def _filler(content: str) -> list[Finding]:
    hits = _FILLER.findall(content)
    if not hits:
        return []
    total = max(1, len(words(content)))
    density = len(hits) * 4 / total
    penalty = min(0.9, 0.25 + 2.0 * density)
    shown = ", ".join(sorted({h.lower() for h in hits})[:5])
    return [
        finding(
            _S,
            "Filler",
            f"placeholder or filler text: {shown}",
            penalty,
            fix="Replace placeholders with real content",
        )
    ]


def _repetition(content: str) -> list[Finding]:
    found: list[Finding] = []
    tokens = words(content)
    if len(tokens) >= 30:
        unique = len(set(tokens)) / len(tokens)
        if unique < 0.3:
            found.append(
                finding(
                    _S,
                    "Repetitive",
                    f"only {unique:.0%} of the words are distinct",
                    min(0.8, (0.3 - unique) * 3 + 0.4),
                    fix="Say each thing once; add the missing substance",
                )
            )
    lines = [ln.strip().lower() for ln in content.splitlines() if len(ln.strip()) > 10]
    if len(lines) >= 4:
        repeats = sum(c - 1 for c in Counter(lines).values() if c > 1)
        if repeats / len(lines) >= 0.25:
            found.append(
                finding(
                    _S,
                    "RepeatedLines",
                    f"{repeats} of {len(lines)} lines repeat earlier ones",
                    0.5,
                    fix="Remove duplicated lines",
                )
            )
    return found


def _python_stubs(content: str) -> list[Finding]:
    tree = python_tree(content)
    if isinstance(tree, ParseFailure):
        return []
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    stubs = [f.name for f in functions if _is_stub(f.body)]
    if not stubs:
        return []
    share = len(stubs) / len(functions)
    return [
        finding(
            _S,
            "StubBody",
            f"functions with no implementation: {', '.join(stubs[:5])}",
            min(0.9, 0.3 + 0.6 * share),
            field=stubs[0],
            fix="Implement the stubbed functions",
        )
    ]


def _is_stub(body: list[ast.stmt]) -> bool:
    statements = [
        s
        for s in body
        if not (
            isinstance(s, ast.Expr)
            and isinstance(s.value, ast.Constant)
            and isinstance(s.value.value, str)
        )
    ]
    if not statements:
        return True
    if len(statements) != 1:
        return False
    only = statements[0]
    if isinstance(only, ast.Pass):
        return True
    if isinstance(only, ast.Expr) and isinstance(only.value, ast.Constant):
        return only.value.value is Ellipsis
    if isinstance(only, ast.Raise) and only.exc is not None:
        target = only.exc.func if isinstance(only.exc, ast.Call) else only.exc
        return isinstance(target, ast.Name) and target.id == "NotImplementedError"
    return False


def _json_emptiness(content: str) -> list[Finding]:
    document = json_document(content)
    if isinstance(document, ParseFailure):
        return []
    leaves = list(_leaves(document))
    if not leaves:
        return [
            finding(
                _S,
                "EmptyDocument",
                "the document holds no values",
                0.7,
                fix="Fill in the fields the task asks for",
            )
        ]
    blank = sum(1 for v in leaves if v is None or (isinstance(v, str) and not v.strip()))
    if blank / len(leaves) > 0.5:
        return [
            finding(
                _S,
                "BlankValues",
                f"{blank} of {len(leaves)} values are null or empty",
                0.5,
                fix="Provide values for the empty fields",
            )
        ]
    return []


def _leaves(node: Any, depth: int = 0) -> Any:
    if depth > 50:
        return
    if isinstance(node, dict):
        for value in node.values():
            yield from _leaves(value, depth + 1)
    elif isinstance(node, list):
        for value in node:
            yield from _leaves(value, depth + 1)
    else:
        yield node
