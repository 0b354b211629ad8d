"""Wall, grounding: do references resolve, are claims supported, do citations look real?

These are the hallucination checks that need no network: citation markers must point at
a reference entry, author-year citations must carry a plausible year, URLs must be
well formed, sweeping claims need a citation, and code must not use names it never defines.
"""

from __future__ import annotations

import ast
import builtins
import re
from datetime import UTC, datetime

from sqlglot import exp

from schemas.quality import Dimension
from schemas.request import NodeOutput, OutputKind
from workers.evaluate.findings import Finding, finding, sentences
from workers.evaluate.parsed import ParseFailure, python_tree, sql_statements

_G = Dimension.GROUNDING
_MARKER = re.compile(r"\[(\d{1,3})\](?!:|\()")
_ENTRY = re.compile(r"^\s*(?:\[(\d{1,3})\]:?|(\d{1,3})\.)\s+\S", re.M)
_AUTHOR_YEAR = re.compile(
    r"\(([A-Z][A-Za-z\-]+(?: et al\.)?(?: (?:and|&) [A-Z][A-Za-z\-]+)?),? "
    r"(\d{4})[a-z]?\)"
)
_URL = re.compile(r"\bhttps?:/{0,3}[^\s)\]>\"']*", re.I)
_WELL_FORMED_URL = re.compile(
    r"^https?://[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)+(?::\d+)?(?:[/?#]\S*)?$", re.I
)
_CLAIM = re.compile(
    r"\b(?:studies (?:show|prove|have shown)|research (?:shows|proves|has shown)|"
    r"experts (?:agree|say)|it is (?:well[- ]known|proven|a fact)|scientists have proven|"
    r"according to (?:a |recent |many )?(?:study|studies|report|reports|survey|experts)|"
    r"\d{1,3}(?:\.\d+)?% of (?:all )?(?:users|people|companies|developers|experts))",
    re.I,
)
_CITED = re.compile(r"\[\d{1,3}\]|\([A-Z][A-Za-z\-]+(?: et al\.)?,? \d{4}\)|https?://")
_LATEST_YEAR = datetime.now(UTC).year
_BUILTINS = set(dir(builtins)) | {"__name__", "__file__", "__doc__", "__builtins__"}


def check_grounding(output: NodeOutput) -> list[Finding]:
    """Citations, URLs and claims in prose; undefined names in code and SQL."""
    found = _urls(output.content)
    if output.kind in (OutputKind.TEXT, OutputKind.MARKDOWN, OutputKind.JSON):
        found.extend(_citations(output.content))
        found.extend(_claims(output.content))
    elif output.kind is OutputKind.PYTHON:
        found.extend(_undefined_names(output.content))
    elif output.kind is OutputKind.SQL:
        found.extend(_unknown_qualifiers(output.content))
    return found[:8]


def _citations(content: str) -> list[Finding]:
    entries = {a or b for a, b in _ENTRY.findall(content)}
    markers = sorted({m for m in _MARKER.findall(content)}, key=int)
    found = [
        finding(
            _G,
            "DanglingCitation",
            f"citation [{m}] has no reference entry",
            0.35,
            field="citations",
            fix=f"Add reference [{m}] or remove the claim that cites it",
        )
        for m in markers
        if m not in entries
    ]
    for author, year in _AUTHOR_YEAR.findall(content):
        if not 1800 <= int(year) <= _LATEST_YEAR:
            found.append(
                finding(
                    _G,
                    "FabricatedCitation",
                    f"({author}, {year}) cites a year that cannot be right",
                    0.6,
                    field="citations",
                    fix="Cite a real, verifiable source",
                )
            )
    return found


def _urls(content: str) -> list[Finding]:
    bad = [u for u in _URL.findall(content) if not _WELL_FORMED_URL.match(u.rstrip(".,;:"))]
    if not bad:
        return []
    return [
        finding(
            _G,
            "MalformedURL",
            f"malformed URL: {bad[0][:80]}",
            min(0.6, 0.3 * len(bad)),
            field="urls",
            fix="Give complete, well-formed URLs or drop them",
        )
    ]


def _claims(content: str) -> list[Finding]:
    unsupported = [s for s in sentences(content) if _CLAIM.search(s) and not _CITED.search(s)]
    if not unsupported:
        return []
    return [
        finding(
            _G,
            "UnsupportedClaim",
            f"{len(unsupported)} sweeping claim(s) without a source, e.g. {unsupported[0][:100]!r}",
            min(0.7, 0.25 * len(unsupported)),
            field="claims",
            fix="Cite a source for each claim or soften it",
        )
    ]


def _undefined_names(content: str) -> list[Finding]:
    tree = python_tree(content)
    if isinstance(tree, ParseFailure):
        return []
    if any(
        isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names)
        for n in ast.walk(tree)
    ):
        return []
    defined = set(_BUILTINS)
    loaded: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                loaded.setdefault(node.id, node.lineno)
            else:
                defined.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defined.add(node.name)
        elif isinstance(node, ast.arg):
            defined.add(node.arg)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            defined.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            defined.add(node.name)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            defined.update(node.names)
    missing = sorted((line, name) for name, line in loaded.items() if name not in defined)
    return [
        finding(
            _G,
            "UndefinedName",
            f"{name} is used (line {line}) but never defined or imported",
            0.3,
            field=name,
            fix=f"Import or define {name}",
        )
        for line, name in missing[:3]
    ]


def _unknown_qualifiers(content: str) -> list[Finding]:
    statements = sql_statements(content)
    if isinstance(statements, ParseFailure):
        return []
    found: list[Finding] = []
    for statement in statements:
        known = {t.alias_or_name.lower() for t in statement.find_all(exp.Table)}
        known |= {t.name.lower() for t in statement.find_all(exp.Table)}
        known |= {c.alias.lower() for c in statement.find_all(exp.CTE)}
        known |= {s.alias.lower() for s in statement.find_all(exp.Subquery) if s.alias}
        for column in statement.find_all(exp.Column):
            qualifier = column.table.lower()
            if qualifier and qualifier not in known:
                found.append(
                    finding(
                        _G,
                        "UnknownReference",
                        f"{column.sql()} refers to {qualifier!r}, which no FROM or JOIN defines",
                        0.45,
                        field=column.sql(),
                        fix=f"Join the table aliased {qualifier} or fix the alias",
                    )
                )
    return found[:3]
