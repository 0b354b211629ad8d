"""Peer checkers run on the same cases, for a side-by-side figure.

- Python: ``pyflakes``, rejecting on a compile error or an error-class message (undefined
  names, misplaced ``return``/``yield``/``break``, duplicate arguments...), not on style
  warnings such as unused imports, which a review gate must not send back.
- JSON: ``jsonschema`` validation alone (what promptfoo's ``is-json`` plus a schema
  assertion does).
- SQL: ``sqlglot.parse`` alone, default dialect.
- HaluEval: unigram overlap, a classic lexical grounding baseline: the share of the
  output's content words found in the source and task; reject below a threshold chosen
  on dev-half lines (the reported figures are the test half's): the best recall there at
  a false-reject rate <= 0.15.

Each peer returns True when it would let the output through, None when it does not apply.
"""

from __future__ import annotations

import ast
import json
import re
import warnings
from collections.abc import Sequence
from typing import Any

import sqlglot
from jsonschema import Draft202012Validator
from pyflakes import messages as pyflakes_messages
from pyflakes.checker import Checker

#: The false-reject budget of the HaluEval target, used to place the overlap threshold.
MAX_FALSE_REJECT = 0.15

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    "a an the and or but of to in on at by for with from as is are was were be been being "
    "it its this that these those i you he she we they me him her us them my your his our "
    "their do does did not no yes so if then than there here what which who whom whose "
    "when where why how all any some can could would should will just also very too about "
    "into over after before up down out off more most such only own same s t don".split()
)


#: pyflakes messages that mean the code is wrong, not merely untidy.
_ERRORS = (
    pyflakes_messages.UndefinedName,
    pyflakes_messages.UndefinedExport,
    pyflakes_messages.UndefinedLocal,
    pyflakes_messages.DuplicateArgument,
    pyflakes_messages.ReturnOutsideFunction,
    pyflakes_messages.YieldOutsideFunction,
    pyflakes_messages.ContinueOutsideLoop,
    pyflakes_messages.BreakOutsideLoop,
    pyflakes_messages.TwoStarredExpressions,
    pyflakes_messages.TooManyExpressionsInStarredAssignment,
)


def pyflakes_passes(code: str) -> bool:
    """No compile error and no error-class pyflakes message."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            tree = ast.parse(code)
            compile(code, "<output>", "exec")
        except (SyntaxError, ValueError, RecursionError):
            return False
        found = Checker(tree, filename="<output>").messages
    return not any(isinstance(m, _ERRORS) for m in found)


def jsonschema_passes(content: str, schema: Any) -> bool:
    """The output parses as JSON and the schema accepts it."""
    try:
        instance = json.loads(content)
    except ValueError:
        return False
    return bool(Draft202012Validator(schema).is_valid(instance))


def sqlglot_passes(sql: str) -> bool:
    """sqlglot's default dialect parses it."""
    try:
        return any(tree is not None for tree in sqlglot.parse(sql))
    except Exception:  # any parser failure is the peer's reject
        return False


def content_words(text: str) -> list[str]:
    """Lower-cased words minus stop words."""
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP]


def overlap(output: str, context: str) -> float:
    """The share of the output's content words that occur in ``context`` (1.0 when none)."""
    words = content_words(output)
    if not words:
        return 1.0
    known = set(content_words(context))
    return sum(1 for w in words if w in known) / len(words)


def choose_threshold(good: Sequence[float], bad: Sequence[float]) -> float:
    """The overlap threshold with the best recall at a false-reject rate <= MAX_FALSE_REJECT.

    Measured on a calibration set; that operating point is the one the engine's HaluEval
    target names, so engine and peer are compared at the same false-reject budget.
    """
    best, best_recall = 0.0, -1.0
    for threshold in sorted({*good, *bad, 1.01}):
        false_reject = sum(1 for v in good if v < threshold) / max(len(good), 1)
        recall = sum(1 for v in bad if v < threshold) / max(len(bad), 1)
        if false_reject <= MAX_FALSE_REJECT and recall > best_recall:
            best, best_recall = threshold, recall
    return best


def peer_verdict(
    request: dict[str, Any], overlap_threshold: float | None
) -> tuple[str, bool] | None:
    """(peer name, passes) for a request, or None when no peer covers its kind."""
    output = request["output"]
    kind, content = output["kind"], output["content"]
    if kind == "python":
        return "pyflakes-errors", pyflakes_passes(content)
    if kind == "json":
        schema = (request.get("contract") or {}).get("json_schema", True)
        return "jsonschema", jsonschema_passes(content, schema)
    if kind == "sql":
        return "sqlglot.parse", sqlglot_passes(content)
    if request.get("sources") and overlap_threshold is not None:
        context = " ".join(s["text"] for s in request["sources"]) + " " + request.get("task", "")
        return "unigram-overlap", overlap(content, context) >= overlap_threshold
    return None


#: Dev-half lines the overlap threshold is chosen on.
CALIBRATION_LINES = 2000


def calibrated_threshold(benchmark: str) -> float | None:
    """The overlap threshold chosen on dev-half HaluEval lines (the test half is reported)."""
    from bench.public import halueval
    from bench.public.heldout import Half, half_of

    layout = halueval.LAYOUTS[benchmark]
    good: list[float] = []
    bad: list[float] = []
    for index, record in halueval.lines(benchmark):
        if len(good) >= CALIBRATION_LINES:
            break
        if half_of(benchmark, str(index)) is not Half.DEV:
            continue
        task = str(record[layout.task]) if layout.task else halueval.SUMMARY_TASK
        context = f"{record[layout.source]} {task}"
        good.append(overlap(str(record[layout.right]), context))
        bad.append(overlap(str(record[layout.wrong]), context))
    return choose_threshold(good, bad) if good else None
