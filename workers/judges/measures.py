"""Measurable properties of an output that the built-in judge scores from.

Each function returns ``(score, notes)``: a 0..1 score and the observations behind it,
so that every score the built-in judge gives carries its justification.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass

from sqlglot import exp

from schemas.request import NodeOutput, OutputKind
from workers.evaluate.findings import sentences, words
from workers.evaluate.parsed import (
    ParseFailure,
    json_document,
    json_nodes,
    python_tree,
    sql_statements,
)
from workers.judges.normalise import Normalisation, views

Measure = tuple[float, list[str]]

_INJECTION = re.compile(
    r"ignore (?:all |the |any )?(?:previous |prior |above )?(?:instructions|rubric|rules)|"
    r"(?:score|rate|grade) (?:this|me|it)? ?(?:as )?(?:1\.0|10/10|100%|perfect)|"
    r"you are (?:now )?(?:the|an?) (?:evaluator|judge|grader)|system prompt|"
    r"disregard (?:the |your )?(?:rubric|instructions)",
    re.I,
)


@dataclass(frozen=True, slots=True)
class InjectionScan:
    """Instructions to the judge found in an output, and what hid them."""

    attempts: int
    """Matches in the text a model reads (every normalisation applied)."""
    exposed_by: tuple[Normalisation, ...] = ()
    """The normalisations that revealed matches the text before them did not show."""

    def describe(self) -> str:
        """The justification note: how many, and which normalisation exposed them."""
        note = f"the output addresses its judge ({self.attempts} instruction(s))"
        if self.exposed_by:
            note += "; exposed by " + ", ".join(step.value for step in self.exposed_by)
        return note


def injection_scan(content: str) -> InjectionScan:
    """Match the instruction patterns in each normalised view of ``content``.

    A step that raises the count is reported: it undid something that hid an instruction
    (zero-width characters inside a word, look-alike letters, a double space).
    """
    counts = [(step, len(_INJECTION.findall(text))) for step, text in views(content)]
    exposed = tuple(
        step
        for (step, count), (_, before) in zip(counts[1:], counts, strict=False)
        if step is not None and count > before
    )
    return InjectionScan(max(count for _, count in counts), exposed)


def injection_attempts(content: str) -> int:
    """How many times the output tries to instruct its judge (after normalisation)."""
    return injection_scan(content).attempts


def correctness(output: NodeOutput) -> Measure:
    """Defects that make an output wrong for its kind."""
    return _CORRECTNESS.get(output.kind, _parsed_code)(output.content)


def _python_correctness(content: str) -> Measure:
    tree = python_tree(content)
    if isinstance(tree, ParseFailure):
        return 0.0, [f"does not parse: {tree.message}"]
    notes: list[str] = []
    penalty = 0.0
    for node in ast.walk(tree):
        if isinstance(node, ast.ExceptHandler) and node.type is None:
            penalty, notes = penalty + 0.2, [*notes, f"bare except at line {node.lineno}"]
        elif (
            isinstance(node, ast.Compare)
            and any(isinstance(op, ast.Eq | ast.NotEq) for op in node.ops)
            and any(isinstance(c, ast.Constant) and c.value is None for c in node.comparators)
        ):
            penalty, notes = (
                penalty + 0.1,
                [*notes, f"comparison with None by == at line {node.lineno}"],
            )
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and any(
            isinstance(d, ast.List | ast.Dict | ast.Set) for d in node.args.defaults
        ):
            penalty, notes = penalty + 0.2, [*notes, f"mutable default argument in {node.name}"]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("eval", "exec")
        ):
            penalty, notes = penalty + 0.25, [*notes, f"{node.func.id}() at line {node.lineno}"]
    notes = notes[:6] or ["no bare excepts, None comparisons, mutable defaults or eval found"]
    return max(0.0, 0.95 - penalty), notes


def _sql_correctness(content: str) -> Measure:
    notes: list[str] = []
    penalty = 0.0
    statements = sql_statements(content)
    if isinstance(statements, ParseFailure):
        return 0.0, [f"does not parse: {statements.message}"]
    for statement in statements:
        if isinstance(statement, exp.Delete | exp.Update) and statement.args.get("where") is None:
            penalty, notes = penalty + 0.5, [*notes, f"{statement.key.upper()} without WHERE"]
        for select in statement.find_all(exp.Select):
            if any(isinstance(e, exp.Star) for e in select.expressions):
                penalty, notes = penalty + 0.15, [*notes, "SELECT * instead of named columns"]
            if select.args.get("order") is not None and select.args.get("limit") is None:
                penalty, notes = penalty + 0.1, [*notes, "ORDER BY without LIMIT"]
            joins = select.args.get("joins") or []
            if any(j.args.get("on") is None and j.args.get("using") is None for j in joins) and (
                select.args.get("where") is None
            ):
                penalty, notes = penalty + 0.3, [*notes, "join without a condition (cartesian)"]
    return max(0.0, 0.95 - penalty), notes[:6] or ["named columns, bounded, joined on keys"]


def _json_correctness(content: str) -> Measure:
    document = json_document(content)
    if isinstance(document, ParseFailure):
        return 0.0, [f"does not parse: {document.message}"]
    arrays = json_nodes(document, max_depth=40, per_list=200)
    mixed = [p for p, v in arrays if isinstance(v, list) and len({type(i) for i in v}) > 1]
    if mixed:
        return 0.75, [f"arrays mixing element types: {', '.join(mixed[:3])}"]
    return 0.92, ["valid JSON with uniformly typed arrays"]


def _parsed_code(content: str) -> Measure:
    """Code in a language the Floor parsed (yaml, shell...): no deeper built-in check."""
    return 0.85, ["parses as its declared kind; the built-in judge checks nothing deeper"]


def _prose_correctness(content: str) -> Measure:
    tokens = words(content)
    absolutes = sum(1 for w in tokens if w in ("always", "never", "guaranteed", "impossible"))
    density = absolutes / max(1, len(tokens))
    if density > 0.02:
        return 0.7, [
            f"{absolutes} absolute claims (always/never/guaranteed) in {len(tokens)} words"
        ]
    return 0.9, ["claims are hedged where they should be; no absolute overstatements"]


_CORRECTNESS: dict[OutputKind, Callable[[str], Measure]] = {
    OutputKind.PYTHON: _python_correctness,
    OutputKind.SQL: _sql_correctness,
    OutputKind.JSON: _json_correctness,
    OutputKind.TEXT: _prose_correctness,
    OutputKind.MARKDOWN: _prose_correctness,
}


def clarity(output: NodeOutput) -> Measure:
    """Readability: sentence length, structure, naming and line lengths."""
    if output.kind is OutputKind.PYTHON:
        return _python_clarity(output.content)
    if output.kind not in (OutputKind.TEXT, OutputKind.MARKDOWN):
        long_lines = sum(1 for ln in output.content.splitlines() if len(ln) > 160)
        if long_lines:
            return 0.75, [f"{long_lines} line(s) longer than 160 characters"]
        return 0.9, ["lines are short and the structure is laid out"]
    lengths = [len(s.split()) for s in sentences(output.content)]
    mean = sum(lengths) / max(1, len(lengths))
    notes = [f"mean sentence length {mean:.0f} words"]
    score = 0.9 if mean <= 25 else max(0.45, 0.9 - (mean - 25) * 0.02)
    if output.kind is OutputKind.MARKDOWN and "#" not in output.content:
        score, notes = score - 0.1, [*notes, "no headings"]
    return score, notes


def _python_clarity(content: str) -> Measure:
    tree = python_tree(content)
    if isinstance(tree, ParseFailure):
        return 0.3, ["does not parse, so it cannot be read as code"]
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    notes: list[str] = []
    score = 0.92
    long = [f.name for f in functions if (f.end_lineno or f.lineno) - f.lineno > 60]
    if long:
        score, notes = score - 0.15, [*notes, f"long functions: {', '.join(long[:3])}"]
    documented = sum(1 for f in functions if ast.get_docstring(f))
    if functions and documented == 0 and len(functions) > 1:
        score, notes = score - 0.1, [*notes, "no function has a docstring"]
    short_names = [f.name for f in functions if len(f.name) <= 1]
    if short_names:
        score, notes = score - 0.1, [*notes, "one-letter function names"]
    return score, notes or [f"{len(functions)} function(s), short, named and documented"]
