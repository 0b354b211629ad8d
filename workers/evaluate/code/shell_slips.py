"""Shell text that is not a script: bash reads nearly any line as a command.

So nearly any text is one edit away from a script, and the edits that mend a Python or
JSON block prove nothing here. Bash's own verdict and the commands' names decide
(``not_shell``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import chain, islice

from schemas.code import CodeLanguage
from workers.evaluate.code import edits
from workers.evaluate.code.grammars import Grammar, grammar_failure, node_texts
from workers.evaluate.code.syntax import syntax_error
from workers.evaluate.parsed import ParseFailure

_L = CodeLanguage

#: Bash's reserved words and control operators: a slip (a dropped ``then``, ``do`` or
#: opening bracket) leaves one of these where bash does not expect it.
_SHELL_GRAMMAR = frozenset(
    "! case coproc do done elif else esac fi for function if in select then time until while"
    " { } [[ ]] || && & ; ;; ;& ;;& | |& ) newline < > >> <& >& <> << <<- <<< >|".split()
)
_UNEXPECTED = re.compile(r"unexpected token `(.*)'$")
#: ``[a | b]`` on the line where the parser stops: a ``|`` inside brackets glued to a
#: word (not ``[[``, not ``||``). To bash a ``|`` ends a command wherever it stands, so
#: the brackets cannot hold it: a synopsis's alternatives do.
_ALTERNATIVES = re.compile(r"(?<!\[)\[[^\[\]\s][^\]\n]*?(?<!\|)\|(?!\|)[^\]\n]*\]")
_QUOTED = re.compile(r"'[^'\n]*'|\"(?:\\.|[^\"\\\n])*\"")
#: What a shell block may really be when bash refuses it: languages bash's grammar is not.
_OTHER_LANGUAGES = (_L.PYTHON, _L.JAVASCRIPT, _L.TYPESCRIPT, _L.JSON)


def not_shell(body: str, failure: ParseFailure) -> str:
    """Why the block bash refuses is not a shell script at all; '' when it is one, broken.

    Alternatives in brackets (``[a | b]``) are a synopsis's. A block that another language
    reads whole is that language (YAML only as a mapping of several keys: it reads any text
    as a plain scalar). A command is a program's name: a block whose commands
    are mostly named by punctuation (``+--``, ``|``) is a drawing. A script's slip leaves
    a string or a bracket open, and closing it mends the script; failing that, a call's
    ``(`` after a command's words, or a word where bash wanted an operator, is another
    language's syntax.
    """
    read = grammar_failure(Grammar.BASH, body)
    lines = body.split("\n")
    stopped = lines[min(len(lines), read.line or 1) - 1] if read is not None else ""
    alternatives = _ALTERNATIVES.search(_QUOTED.sub("", stopped))
    if alternatives is not None:
        return f"{alternatives.group(0)[:40]!r} offers alternatives, as a synopsis does"
    other = next((o for o in _OTHER_LANGUAGES if syntax_error(o, body) is None), None)
    if other is not None:
        return f"it reads as {other.value}"
    keys = _yaml_keys(body)
    if keys >= _MAPPING_KEYS:
        return f"it reads as a YAML mapping of {keys} keys"
    names = node_texts(Grammar.BASH, body, "command_name")
    nameless = [n for n in names if not any(c.isalnum() for c in n)]
    if len(nameless) >= 2 and 2 * len(nameless) >= len(names):
        return f"{len(nameless)} of its {len(names)} commands have no name: a drawing"
    if any(grammar_failure(Grammar.BASH, text) is None for text in _shell_edits(body, failure)):
        return ""  # a string, a bracket or a compound left open: a script's slip
    unexpected = _UNEXPECTED.search(failure.message)
    if unexpected and unexpected.group(1) not in _SHELL_GRAMMAR:
        return f"bash stops at {unexpected.group(1)[:30]!r}, where a script has none"
    return ""


#: Keys of a YAML mapping that make a block a manifest, not a script: YAML reads nearly
#: any text (a plain scalar), but a script is no mapping of ``name: value`` lines.
_MAPPING_KEYS = 3


def _yaml_keys(body: str) -> int:
    """How many keys the block has as one YAML mapping (0: it is none)."""
    from yaml import MappingNode

    from workers.evaluate.code.yaml_docs import yaml_nodes

    nodes = yaml_nodes(body)
    if isinstance(nodes, ParseFailure) or len(nodes) != 1:
        return 0
    return len(nodes[0].value) if isinstance(nodes[0], MappingNode) else 0


#: What a script's slip leaves out where bash stops: a closer or a compound's keyword.
_SHELL_TOKENS = (")", ";;", ";", "; then", "; do", "\nfi", "\ndone", "\nesac", "}")


def _shell_edits(body: str, failure: ParseFailure) -> Iterator[str]:
    """The script with one slip undone, where bash stopped and where tree-sitter-bash did.

    Bash names the end of the file for a string left open; tree-sitter-bash, recovering,
    may name the top of the script: the slip is near one of them.
    """
    read = grammar_failure(Grammar.BASH, body)
    stops = [failure] if read is None else [failure, read]
    candidates = chain(
        chain.from_iterable(edits.closed_strings(_L.SHELL, body, stop) for stop in stops),
        edits.closed_brackets(_L.SHELL, body),
        chain.from_iterable(_shell_tokens(body, stop) for stop in stops),
    )
    return islice(edits.unique(candidates), edits.MAX_EDITS)


def _shell_tokens(body: str, failure: ParseFailure) -> Iterator[str]:
    lines, starts, row, stop = edits.located(body, failure)
    before = len(body[:stop].rstrip())
    spots = [stop, before, starts[row] + len(lines[row].rstrip())]
    for spot in dict.fromkeys(spots):
        for token in _SHELL_TOKENS:
            yield body[:spot] + token + body[spot:]
