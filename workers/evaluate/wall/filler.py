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

from sqlglot import exp

from schemas.quality import Dimension
from schemas.request import NodeOutput, OutputKind
from schemas.stages import IssueCode
from workers.evaluate.findings import Finding, finding, words
from workers.evaluate.parsed import (
    ParseFailure,
    json_document,
    json_nodes,
    python_tree,
    sql_statements,
)

#: Filler whatever surrounds it.
STRONG = re.compile(
    r"lorem ipsum|\bdolor sit amet\b|\binsert (?:(?:text|content) )?here\b|"
    r"\[insert [^\]\n]{0,80}\]|\bas an ai\b|\bcontent goes here\b|\bsample text\b|\betc\.? etc\b|"
    r"\byour (?:text|content|answer) here\b",
    re.I,
)
#: Notes and placeholders that real prose also uses now and then ("a TODO list").
WEAK = re.compile(r"\bTODO\b|\bTBD\b|\bFIXME\b|\bxxx+\b|\bplaceholder\b|\bblah\b", re.I)
#: Literal phrases one of which every match of ``STRONG`` / ``WEAK`` contains (lower case).
#: Python's regex alternation is slow on a large text (tens of ms for a 200 kB module);
#: ``in`` on the lowered text is not, and almost always rules a match out.
_STRONG_ANCHORS = (
    "lorem ipsum",
    "dolor sit amet",
    "insert text here",
    "insert content here",
    "insert here",
    "[insert ",
    "as an ai",
    "content goes here",
    "sample text",
    "etc etc",
    "etc. etc",
    "your text here",
    "your content here",
    "your answer here",
)
_WEAK_ANCHORS = ("todo", "tbd", "fixme", "xxx", "placeholder", "blah")
#: A string value that is only a placeholder: ``"TODO"``, ``"TBD: fill in"``, ``"CHANGEME"``;
#: not a sentence that begins with the word (``"placeholder too large for max width"``).
_PLACEHOLDER_VALUE = re.compile(
    r"^\s*(?:(?:TODO|TBD|FIXME|xxx+)\b|(?:placeholder|changeme|change me|fill(?: this)? in|"
    r"your[ _-]\w+[ _-]here|n/?a yet)\b\W*(?:$|[:(\-\u2013\u2014]|\s+-))",
    re.I,
)
#: Where a placeholder value could begin in source text: right after an opening quote.
#: Without one (nor strong filler anywhere) no value can be a placeholder, and the
#: parsed tree is not walked: the common case, and walking a large module costs.
_QUOTED_PLACEHOLDER = re.compile(
    r"""['"]\s*(?:TODO|TBD|FIXME|xxx|placeholder|changeme|change me|fill|your[ _-]|n/?a yet)""",
    re.I,
)
_NAME_HINT = re.compile(r"placeholder|your_|_here|table_name|column_name|todo|tbd|fixme", re.I)
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
    content = output.content
    sql = output.kind is OutputKind.SQL
    names = _placeholder_names(output) if sql and _NAME_HINT.search(content) else []
    quoted = strong_filler(content) or _QUOTED_PLACEHOLDER.search(content)
    values = list(_string_values(output)) if quoted or names else []
    hits = [v for v in values if _PLACEHOLDER_VALUE.match(v) or strong_filler(v)] + names
    if not hits:
        return []
    shown = ", ".join(sorted({repr(h.strip()[:30]) for h in hits})[:5])
    return [
        finding(
            _S,
            IssueCode.FILLER,
            f"placeholder values: {shown}",
            min(0.9, 0.3 + 0.9 * len(hits) / max(len(hits), len(values))),
            fix="Replace placeholder values with real content",
        )
    ]


def strong_filler(text: str) -> list[str]:
    """Unmistakable filler in ``text``."""
    return _matches(STRONG, _STRONG_ANCHORS, text)


def _matches(pattern: re.Pattern[str], anchors: tuple[str, ...], text: str) -> list[str]:
    lowered = text.lower()
    if not any(anchor in lowered for anchor in anchors):
        return []
    return [m.group(0) for m in pattern.finditer(text)]


def prose_text(content: str) -> str:
    """Prose without its code: fenced blocks and inline code spans removed."""
    return _INLINE_CODE.sub(" ", _FENCED.sub(" ", content))


def _prose(content: str) -> list[Finding]:
    text = prose_text(content)
    strong = strong_filler(text)
    weak = _matches(WEAK, _WEAK_ANCHORS, text)
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
            yield from python_values(tree)
    elif output.kind is OutputKind.SQL:
        statements = sql_statements(output.content)
        if not isinstance(statements, ParseFailure):
            for statement in statements:
                yield from (lit.name for lit in statement.find_all(exp.Literal) if lit.is_string)
    elif output.kind is OutputKind.JSON:
        document = json_document(output.content)
        if not isinstance(document, ParseFailure):
            # String values, not keys: ``{"todo": [...]}`` is a to-do list, not a placeholder.
            yield from (v for _, v in json_nodes(document, max_depth=50) if isinstance(v, str))


def python_values(tree: ast.Module) -> Iterator[str]:
    """The strings a program gives as values (assigned, returned, keyword, default, dict).

    A placeholder there (``API_KEY = "TODO"``, ``return "TBD"``) stands where a real value
    belongs. Strings elsewhere are data the program handles (a lexer's ``"todo"`` keyword,
    a test's skip reason) or documentation (a docstring), and say nothing unfinished.
    """
    for node in ast.walk(tree):
        candidates: list[ast.expr | None] = []
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.Return | ast.keyword):
            candidates.append(node.value)
        elif isinstance(node, ast.arguments):
            candidates.extend([*node.defaults, *node.kw_defaults])
        elif isinstance(node, ast.Dict):
            candidates.extend(node.values)
        for value in candidates:
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                yield value.value


def _placeholder_names(output: NodeOutput) -> list[str]:
    """Tables and columns a SQL template left blank: ``SELECT column_name FROM your_table``."""
    if output.kind is not OutputKind.SQL:
        return []
    statements = sql_statements(output.content)
    if isinstance(statements, ParseFailure):
        return []
    return [
        node.name
        for statement in statements
        for node in statement.find_all(exp.Table, exp.Column)
        if _PLACEHOLDER_NAME.match(node.name)
    ]
