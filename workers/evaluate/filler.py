"""Wall, substance: placeholders and filler, judged in what the output says.

Prose says things in its sentences; code and data say things in their string values.
A comment is not what a program says: ``# TODO: cache this`` or ``# XXX`` in real code is
a note between engineers, not filler, so comments are never read here. In prose, a lone
TODO in a long document is a note too; a placeholder in a short answer, or notes dense
enough to show the text is unfinished, is filler. Unmistakable filler (lorem ipsum,
"[insert ...]", "as an AI") counts wherever it appears.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from typing import Any

from sqlglot import exp

from schemas.quality import Dimension
from schemas.request import NodeOutput, OutputKind
from schemas.stages import IssueCode
from workers.evaluate.findings import Finding, finding, words
from workers.evaluate.parsed import ParseFailure, json_document, python_tree, sql_statements

#: Filler whatever surrounds it.
STRONG = re.compile(
    r"lorem ipsum|\bdolor sit amet\b|\binsert (?:text|content|here)\b|\[insert [^\]\n]{0,80}\]|"
    r"\bas an ai\b|\bcontent goes here\b|\bsample text\b|\betc\.? etc\b|"
    r"\byour (?:text|content|answer) here\b",
    re.I,
)
#: Notes and placeholders that real prose also uses now and then ("a TODO list").
WEAK = re.compile(r"\bTODO\b|\bTBD\b|\bFIXME\b|\bxxx+\b|\bplaceholder\b|\bblah\b", re.I)
#: A string value that is only a placeholder: ``"TODO"``, ``"TBD: fill in"``, ``"CHANGEME"``.
_PLACEHOLDER_VALUE = re.compile(
    r"^\s*(?:TODO|TBD|FIXME|xxx+|placeholder|changeme|change me|fill(?: this)? in|"
    r"your[ _-]\w+[ _-]here|n/?a yet)\b",
    re.I,
)
#: An identifier left as a template's blank: ``placeholder_table``, ``your_column``.
_PLACEHOLDER_NAME = re.compile(
    r"^(?:\w*placeholder\w*|your_\w+|\w+_here|table_name|column_name|todo|tbd|fixme)$", re.I
)
#: Words of prose per weak note below which notes are dense enough to be filler.
WORDS_PER_NOTE = 100
_FENCED = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
_INLINE_CODE = re.compile(r"`[^`\n]+`")
_S = Dimension.SUBSTANCE


def check_filler(output: NodeOutput) -> list[Finding]:
    """Filler in prose, or placeholder string values in code and data."""
    if output.kind in (OutputKind.TEXT, OutputKind.MARKDOWN):
        return _prose(output.content)
    values = list(_string_values(output))
    hits = [v for v in values if STRONG.search(v) or _PLACEHOLDER_VALUE.match(v)]
    if not hits:
        return []
    shown = ", ".join(sorted({repr(h.strip()[:30]) for h in hits})[:5])
    return [
        finding(
            _S,
            IssueCode.FILLER,
            f"placeholder values: {shown}",
            min(0.9, 0.25 + 0.6 * len(hits) / len(values)),
            fix="Replace placeholder values with real content",
        )
    ]


def prose_text(content: str) -> str:
    """Prose without its code: fenced blocks and inline code spans removed."""
    return _INLINE_CODE.sub(" ", _FENCED.sub(" ", content))


def _prose(content: str) -> list[Finding]:
    text = prose_text(content)
    strong = [m.group(0) for m in STRONG.finditer(text)]
    weak = [m.group(0) for m in WEAK.finditer(text)]
    total = max(1, len(words(text)))
    if weak and len(weak) * WORDS_PER_NOTE < total:
        weak = []  # sparse notes in a long document: not filler
    hits = strong + weak
    if not hits:
        return []
    density = len(hits) * 4 / total
    shown = ", ".join(sorted({h.lower() for h in hits})[:5])
    return [
        finding(
            _S,
            IssueCode.FILLER,
            f"placeholder or filler text: {shown}",
            min(0.9, 0.25 + 2.0 * density),
            fix="Replace placeholders with real content",
        )
    ]


def _string_values(output: NodeOutput) -> Iterator[str]:
    """What code or data says: string literals (Python, SQL) or string values (JSON)."""
    if output.kind is OutputKind.PYTHON:
        tree = python_tree(output.content)
        if not isinstance(tree, ParseFailure):
            yield from (
                n.value
                for n in ast.walk(tree)
                if isinstance(n, ast.Constant) and isinstance(n.value, str)
            )
    elif output.kind is OutputKind.SQL:
        statements = sql_statements(output.content)
        if not isinstance(statements, ParseFailure):
            for statement in statements:
                yield from (lit.name for lit in statement.find_all(exp.Literal) if lit.is_string)
                yield from (
                    node.name
                    for node in statement.find_all(exp.Table, exp.Column)
                    if _PLACEHOLDER_NAME.match(node.name)
                )
    elif output.kind is OutputKind.JSON:
        document = json_document(output.content)
        if not isinstance(document, ParseFailure):
            yield from _json_strings(document, 0)


def _json_strings(node: Any, depth: int) -> Iterator[str]:
    """String values (not keys: ``{"todo": [...]}`` is a to-do list, not a placeholder)."""
    if depth > 50:
        return
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from _json_strings(value, depth + 1)
    elif isinstance(node, list):
        for value in node:
            yield from _json_strings(value, depth + 1)
