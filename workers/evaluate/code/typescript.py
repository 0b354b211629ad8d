"""TypeScript as its compiler reads it, on a grammar a few releases behind the language.

tree-sitter-typescript (0.23, the latest wheel) predates syntax that real packages ship:

- variance annotations on type parameters (TypeScript 4.7): ``interface Schema<out O, in I>``;
- ``export type * from './x'`` (5.0);
- a default export's anonymous signature in a declaration file:
  ``export default function (): Map;``;
- a member of an import type: ``import("./observable").Observable<T>``.

A text the grammar rejects is read again with each of these written in an older,
equivalent form of the same length (so a position still points at the same place); the
second reading's error, if any, is the text's. The compiler's triple-slash directives
(``/// <reference ... />``), which tree-sitter reads as comments, are checked as the
compiler checks them (error TS1084).
"""

from __future__ import annotations

import re

from workers.evaluate.code.grammars import Grammar, grammar_failure
from workers.evaluate.code.leniency import blanked
from workers.evaluate.parsed import ParseFailure

_DIRECTIVE = re.compile(r"^///[ \t]*<reference\b[^\n]*$", re.M)
_WELL_FORMED_DIRECTIVE = re.compile(
    r"^///[ \t]*<reference(?:[ \t]+[a-z-]+[ \t]*=[ \t]*(?:\"[^\"\n]*\"|'[^'\n]*'))+[ \t]*/>[ \t]*$"
)
#: ``in``, ``out`` or ``in out`` opening a type parameter (after ``<`` or ``,`` and any
#: comments; before a name, then ``extends``, a default, or the next parameter).
_VARIANCE = re.compile(
    r"([<,](?>\s+|/\*(?:[^*]|\*(?!/))*+\*/|//[^\n]*+)*+)((?:in\s+out|in|out)\s+)"
    r"(?=[A-Za-z_$][\w$]*\s*(?:extends\b|=|,|>))"
)
_TYPE_STAR = re.compile(r"\b(export\s+)(type)(\s+\*)")
_DEFAULT_SIGNATURE = re.compile(r"\bexport\s+default\s+function\s*(?=[(<])")
_IMPORT_MEMBER = re.compile(r"\bimport\(\s*(\"[^\"\n]*\"|'[^'\n]*')\s*\)\.(?=[A-Za-z_$])")


def _signature(match: re.Match[str]) -> str:
    """``export default function (`` as ``export function x(``, padded to its length."""
    named = " function x"
    return "export" + " " * (len(match.group(0)) - len("export") - len(named)) + named


def older_form(text: str) -> str:
    """``text`` with the syntax newer than the grammar written as the grammar reads it."""
    text = _VARIANCE.sub(lambda m: m.group(1) + blanked(m.group(2)), text)
    text = _TYPE_STAR.sub(lambda m: m.group(1) + blanked(m.group(2)) + m.group(3), text)
    text = _DEFAULT_SIGNATURE.sub(_signature, text)
    return _IMPORT_MEMBER.sub(lambda m: blanked(m.group(0)), text)


def typescript_failure(text: str, grammar: Grammar = Grammar.TYPESCRIPT) -> ParseFailure | None:
    """Where the compiler would stop reading ``text``, as far as the grammar can tell."""
    failure = grammar_failure(grammar, text)
    if failure is not None:
        older = older_form(text)
        if older == text:
            return failure
        failure = grammar_failure(grammar, older, shown=text)
        if failure is not None:
            return failure
    for directive in _DIRECTIVE.finditer(text):
        if not _WELL_FORMED_DIRECTIVE.match(directive.group(0)):
            line = text.count("\n", 0, directive.start()) + 1
            return ParseFailure("invalid 'reference' directive syntax", line, 1)
    return None
