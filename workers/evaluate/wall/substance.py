"""Wall, substance: is there meaningful content of a sensible length, or only filler?

What counts as enough depends on what was asked. A declared contract is the authority on
shape (``min_length``, ``max_length``, a JSON Schema that accepts ``{}``); the task says
whether a one-word answer is right ("What is the capital of France?") or a composition
is due ("Explain ..."); only without either does the output's kind set the bar.
"""

from __future__ import annotations

import ast
import re
from collections import Counter

from sqlglot import exp

from schemas.quality import Dimension
from schemas.request import NodeOutput, OutputContract, OutputKind
from schemas.stages import IssueCode
from workers.evaluate.findings import Finding, finding, words
from workers.evaluate.parsed import (
    ParseFailure,
    json_document,
    json_nodes,
    python_tree,
    sql_statements,
)
from workers.evaluate.wall.filler import check_filler, prose_text
from workers.evaluate.wall.stubs import python_stubs, task_names

#: Characters below which prose is thin when no task or contract sets the bar. Text has
#: none: a short answer is often the right one. Code and data are judged by what they
#: contain (a statement, a value), never by their size: ``COMMIT`` is complete SQL.
PROSE_MIN_CHARS: dict[OutputKind, int] = {OutputKind.TEXT: 0, OutputKind.MARKDOWN: 60}
#: The least a composition ("Explain ...", "Write ...", "Summarize ...") takes, in characters.
COMPOSITION_MIN_CHARS = 40
#: Characters past which prose is bloated, absent a contract maximum. Code and data
#: have no such bound: a large module or document is not padding by being large.
PROSE_MAX_CHARS: dict[OutputKind, int] = {OutputKind.TEXT: 60_000, OutputKind.MARKDOWN: 80_000}
#: A request for a composition: the verb opens a sentence or follows "please" / "can you";
#: "What else did she write?" or "in the draft of 2017" ask for a short answer.
#: "Write a response", "write the reply", "write the comment the bot should post" ask for
#: an answer of any length: they name the message that carries it (Alpaca's and many
#: few-shot templates, or a bot's turn in a thread, around a one-word question); and
#: "document" is the verb only before its object ("Document[0]:" labels a passage). A verb
#: with neither an object nor a full stop after it is a value ("status: draft"), not a request.
_COMPOSITION = re.compile(
    r"(?:^|[.!?:;\n]\s*|\b(?:please|now|then|also)\s+|\b(?:can|could|would|will) you\s+)"
    r"(?:explain|describe|(?:write|draft)(?!\s+(?:(?:a|an|the|your)\s+)?(?:\w+\s+)?"
    r"(?:reply|response|answer|comment|message)\b)|summari[sz]e|discuss|compare|outline|elaborate|"
    r"analy[sz]e|justify|document(?=[ \t]+(?:the|a|an|your|this|these|each|every|all|how)\b))\b"
    r"(?=[ \t]+\S|[ \t]*[.!])"
    r"|\bin detail\b|\bstep[- ]by[- ]step\b|\bessay\b",
    re.I,
)
#: A reply that acknowledges and says nothing; judged only when no task says otherwise.
_EMPTY_REPLY = re.compile(
    r"^\s*(?:done|ok(?:ay)?|sure|certainly|completed?|finished|will do|as requested|"
    r"here (?:it is|you go)|see (?:above|below|attached)|task complete(?:d)?)[\s.!]*$",
    re.I,
)
_PROSE = (OutputKind.TEXT, OutputKind.MARKDOWN)
_S = Dimension.SUBSTANCE


def check_substance(
    output: NodeOutput, *, task: str | None = None, contract: OutputContract | None = None
) -> list[Finding]:
    """Filler, repetition, stubs, emptiness, and length against what was asked."""
    found = check_filler(output)
    if output.kind in _PROSE:
        found.extend(_prose_length(output, task, contract))
        found.extend(_repetition(output.content))
    elif output.kind is OutputKind.PYTHON:
        tree = python_tree(output.content)
        if not isinstance(tree, ParseFailure):
            wanted = task_names(task) | set(contract.required_fields if contract else ())
            found.extend(_python_does_nothing(tree))
            found.extend(python_stubs(tree, wanted))
    elif output.kind is OutputKind.SQL:
        found.extend(_sql_reads_nothing(output.content, task))
    elif output.kind is OutputKind.JSON and (contract is None or contract.json_schema is None):
        # A declared schema is the authority on shape: {} or null it accepts is not empty.
        found.extend(_json_emptiness(output.content))
    return found


def asks_for_composition(task: str | None) -> bool:
    """Whether the task asks for a composition rather than an answer."""
    return bool(task) and _COMPOSITION.search(task or "") is not None


def expected_min_chars(kind: OutputKind, task: str | None, contract: OutputContract | None) -> int:
    """The fewest characters useful prose needs, from the contract, the task, or the kind."""
    if kind not in _PROSE or (contract is not None and contract.min_length is not None):
        return 0  # code and data are judged by content; the Floor enforces min_length
    if task:
        return COMPOSITION_MIN_CHARS if asks_for_composition(task) else 0
    return PROSE_MIN_CHARS[kind]


def _prose_length(
    output: NodeOutput, task: str | None, contract: OutputContract | None
) -> list[Finding]:
    size = len(output.content.strip())
    low = expected_min_chars(output.kind, task, contract)
    if size < low:
        return [_thin(f"{size} characters; this answer needs at least {low}")]
    if not task and _EMPTY_REPLY.match(output.content):
        return [_thin("an acknowledgement with no content")]
    high = PROSE_MAX_CHARS[output.kind]
    if (contract is None or contract.max_length is None) and size > high:
        return [
            finding(
                _S,
                IssueCode.BLOATED,
                f"{size} characters; more than the usual {high}",
                0.2,
                fix="Cut repetition and material the task did not ask for",
            )
        ]
    return []


def _python_does_nothing(tree: ast.Module) -> list[Finding]:
    """A module of nothing but docstrings, imports, ``pass`` and ``...``.

    A package's ``__init__`` or a module that re-exports (``from .models import Model as
    Model``, a relative import, ``from attr.converters import *``) is an interface: those
    imports are its content.
    """
    if any(not _inert(statement) for statement in tree.body):
        return []
    return [_thin("the module defines and does nothing")]


def _inert(statement: ast.stmt) -> bool:
    if isinstance(statement, ast.ImportFrom):  # a re-export: relative, ``as`` itself, or ``*``
        reexports = any(a.asname == a.name or a.name == "*" for a in statement.names)
        return statement.level == 0 and not reexports
    if isinstance(statement, ast.Pass | ast.Import):
        return True
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)


def _sql_reads_nothing(content: str, task: str | None) -> list[Finding]:
    """``SELECT 1`` for "the query over search_queries": the query reads no data."""
    named = task_names(task)
    statements = sql_statements(content)
    if not named or isinstance(statements, ParseFailure):
        return []
    if any(s.find(exp.Table) is not None for s in statements):
        return []
    text = content.casefold()
    missing = sorted(n for n in named if n.casefold() not in text)
    if not missing:
        return []
    # As empty as ``{}``: the statement returns none of the data the task is about.
    return [_thin(f"the SQL reads no table, though the task names {', '.join(missing[:3])}", 0.7)]


def _thin(message: str, penalty: float = 0.5) -> Finding:
    return finding(
        _S, IssueCode.TOO_THIN, message, penalty, fix="Provide the full content the task asks for"
    )


#: Words per window of the distinct-word ratio: long enough for a sentence to repeat in.
REPETITION_WINDOW = 100


def distinct_ratio(tokens: list[str], window: int = REPETITION_WINDOW) -> float:
    """The mean share of distinct words in each run of ``window`` words (MATTR).

    The plain ratio falls with length however varied the prose (a 10,000-word manual
    reuses its words), so it is measured over windows: a text saying one thing again
    and again scores low at any length, a long and varied one does not.
    """
    if len(tokens) <= window:
        return len(set(tokens)) / max(1, len(tokens))
    counts = Counter(tokens[:window])
    total = len(counts)
    for i in range(window, len(tokens)):
        incoming, outgoing = tokens[i], tokens[i - window]
        counts[incoming] += 1
        counts[outgoing] -= 1
        if counts[outgoing] == 0:
            del counts[outgoing]
        total += len(counts)
    return total / (len(tokens) - window + 1) / window


def _repetition(content: str) -> list[Finding]:
    found: list[Finding] = []
    text = prose_text(content)
    tokens = words(text)
    if len(tokens) >= 30:
        unique = distinct_ratio(tokens)
        if unique < 0.3:
            found.append(
                finding(
                    _S,
                    IssueCode.REPETITIVE,
                    f"only {unique:.0%} of the words are distinct",
                    min(0.8, (0.3 - unique) * 3 + 0.4),
                    fix="Say each thing once; add the missing substance",
                )
            )
    # Lines of prose only: table rules, separators and code repeat by nature.
    lines = [ln.strip().lower() for ln in text.splitlines() if len(words(ln)) >= 3]
    if len(lines) >= 4:
        repeats = sum(c - 1 for c in Counter(lines).values() if c > 1)
        if repeats / len(lines) >= 0.25:
            found.append(
                finding(
                    _S,
                    IssueCode.REPEATED_LINES,
                    f"{repeats} of {len(lines)} lines repeat earlier ones",
                    0.5,
                    fix="Remove duplicated lines",
                )
            )
    return found


def _json_emptiness(content: str) -> list[Finding]:
    document = json_document(content)
    if isinstance(document, ParseFailure):
        return []
    leaves = [v for _, v in json_nodes(document, max_depth=50) if not isinstance(v, dict | list)]
    if not leaves:
        return [
            finding(
                _S,
                IssueCode.EMPTY_DOCUMENT,
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
                IssueCode.BLANK_VALUES,
                f"{blank} of {len(leaves)} values are null or empty",
                0.5,
                fix="Provide values for the empty fields",
            )
        ]
    return []
