"""What a flagged documentation block holds of what documentation does on purpose.

Issue 37 asks that elisions, console sessions, diffs and templates (and the placeholders
they carry) in real documentation raise no finding. A flagged block that holds none of
them is broken code, or notation that no parser reads; one that holds any may be a false
alarm that the engine's leniency (``workers.evaluate.code.leniency``) missed. The marks
here are written apart from the engine's readings and cast wider (any ``...``, any
prompt-like line), so their count on the test half bounds the false alarms of those
kinds without a test block being read.
"""

from __future__ import annotations

import re
from enum import StrEnum

from schemas.code import CodeLanguage

_L = CodeLanguage


class Mark(StrEnum):
    """A kind of thing documentation does to code on purpose."""

    ELISION = "elision"
    PROMPT = "prompt"
    DIFF = "diff"
    TEMPLATE = "template"
    PLACEHOLDER = "placeholder"


#: ``...`` that is not JavaScript's spread (``...args``), ``…``, or words of leaving out.
_ELISION = re.compile(
    r"\.{3}(?![\w$\[{(])|…|\b(?:rest of|unchanged|omitted|snip|elided|and so on)\b", re.I
)
_PROMPT = re.compile(r"^[ \t]*(?:\$|%|>>>|>|\.\.\.|In \[\d*\]:|PS[^>\n]*>|❯|➜|~>)[ \t]", re.M)
_ADDED = re.compile(r"^\+(?!\+)", re.M)
_REMOVED = re.compile(r"^-(?![-\s])", re.M)
_TEMPLATE = re.compile(r"\{\{|\{%|<%")
_DOLLAR_BRACE = re.compile(r"\$\{")
#: Where ``${`` is the language's own syntax (a shell's expansion, a template literal).
_OWN_DOLLAR_BRACE = frozenset({_L.SHELL, _L.JAVASCRIPT, _L.TYPESCRIPT, _L.YAML, _L.DOCKERFILE})
_PLACEHOLDER = re.compile(r"<[A-Za-z][\w .:/|-]{0,60}>|\bYOUR_[A-Z_]+\b|\[[A-Z_ ]{3,}\]")
#: Where ``<name>`` is markup or a type's argument, not a writer's placeholder.
_MARKUP = frozenset({_L.HTML, _L.XML, _L.JAVASCRIPT, _L.TYPESCRIPT})


def marks(language: CodeLanguage, body: str) -> list[Mark]:
    """The marks ``body`` holds, in ``Mark``'s order; [] when it holds none."""
    found: list[Mark] = []
    if _ELISION.search(body):
        found.append(Mark.ELISION)
    if _PROMPT.search(body):
        found.append(Mark.PROMPT)
    if _ADDED.search(body) and _REMOVED.search(body):
        found.append(Mark.DIFF)
    if _TEMPLATE.search(body) or (language not in _OWN_DOLLAR_BRACE and _DOLLAR_BRACE.search(body)):
        found.append(Mark.TEMPLATE)
    if language not in _MARKUP and _PLACEHOLDER.search(body):
        found.append(Mark.PLACEHOLDER)
    return found
