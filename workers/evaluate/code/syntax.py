"""One question for every language: where does its parser stop reading this text?

The standard library parses Python, JSON, TOML and XML; sqlglot parses SQL (the Floor's
own parser); PyYAML reads every document of a YAML stream (composing, never
constructing, so no tag and no alias is ever acted on); tree-sitter's grammars read the
rest (``grammars``), a shell script's rejection confirmed by ``bash -n`` (``bash``), and
TypeScript newer than its grammar written in an older form first (``typescript``).
Each heavy parser is imported the first time a text needs it.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from functools import lru_cache
from xml.parsers import expat

from schemas.code import CodeLanguage
from workers.evaluate.code.bash import bash_failure, redirect_across_lines
from workers.evaluate.code.grammars import Grammar, grammar_failure, grammar_reads
from workers.evaluate.code.leniency import blanked
from workers.evaluate.code.typescript import older_form, typescript_failure
from workers.evaluate.parsed import ParseFailure, json_document, python_tree, sql_statements

_CACHE_SIZE = 256
_TOML_AT = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")
_TOML_AT_END = " (at end of document)"


def _python(text: str) -> ParseFailure | None:
    tree = python_tree(text)
    return tree if isinstance(tree, ParseFailure) else None


def _json(text: str) -> ParseFailure | None:
    document = json_document(text)
    return document if isinstance(document, ParseFailure) else None


def _sql(text: str) -> ParseFailure | None:
    statements = sql_statements(text)
    return statements if isinstance(statements, ParseFailure) else None


def _toml(text: str) -> ParseFailure | None:
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        at = _TOML_AT.search(message)
        if at is None and message.endswith(_TOML_AT_END):
            lines = text.split("\n")
            return ParseFailure(message[: -len(_TOML_AT_END)], len(lines), len(lines[-1]) + 1)
        if at is None:
            return ParseFailure(message)
        return ParseFailure(message[: at.start()], int(at.group(1)), int(at.group(2)))
    except RecursionError:
        return ParseFailure("nesting too deep to parse")
    return None


def _xml(text: str) -> ParseFailure | None:
    # Expat fetches nothing: no external entity handler is set, and its amplification
    # limits stop an entity bomb.
    parser = expat.ParserCreate()
    try:
        parser.Parse(text, True)
    except expat.ExpatError as exc:
        return ParseFailure(expat.ErrorString(exc.code), exc.lineno, exc.offset + 1)
    return None


def _yaml(text: str) -> ParseFailure | None:
    from workers.evaluate.code.yaml_docs import yaml_failure

    return yaml_failure(text)


def _shell(text: str) -> ParseFailure | None:
    read = grammar_failure(Grammar.BASH, text)
    if read is None:
        return bash_failure(text) if redirect_across_lines(text) else None
    refused = bash_failure(text)
    if refused is None or refused.line != read.line:
        return refused
    return ParseFailure(refused.message, refused.line, read.column)


_XML_DECLARATION = re.compile(r"\A\s*<\?xml[^>]*\?>")
#: Text characters a browser reads as text: ``>``, ``&`` that starts no character
#: reference, and ``<`` that starts no tag, end tag, comment or declaration (``a < b``).
_BARE = re.compile(r">|&(?![A-Za-z][A-Za-z0-9]*;?|#)|<(?![A-Za-z/!?])")
_HTML_TEMPLATE = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}")
_MARKUP = re.compile(r"<(?:!--.*?-->|[A-Za-z/!?](?:\"[^\"]*\"|'[^']*'|[^'\">])*>?)", re.S)


def _html(text: str) -> ParseFailure | None:
    """HTML as a browser reads it: a bare ``>``, ``&`` or ``<`` in text, XHTML's declaration.

    tree-sitter-html takes each for an error; each is blanked out, one character for one, so
    a position still points at the same place. A page template's tags (``{% if %}``,
    ``{{ url }}``, ``{# #}``), in text, in a tag or in an attribute's value
    (``href="{% static "a.css" %}"``), are filled in first, as rendering fills them: an
    expression with a word, a statement with blanks, each of the same length. A template's
    page parses once rendered, as its fenced block does (``leniency``).
    """
    shown = _XML_DECLARATION.sub(lambda m: blanked(m.group(0)), text)
    text = _HTML_TEMPLATE.sub(_filled, shown)
    pieces, at = [], 0
    for tag in _MARKUP.finditer(text):
        pieces.append(_BARE.sub(" ", text[at : tag.start()]))
        pieces.append(tag.group(0))
        at = tag.end()
    pieces.append(_BARE.sub(" ", text[at:]))
    return grammar_failure(Grammar.HTML, "".join(pieces), shown=shown)


def _filled(match: re.Match[str]) -> str:
    """A template tag as a word (``{{ }}``) or blanks of as many bytes: a byte column holds."""
    tag = match.group(0)
    return ("x" if tag.startswith("{{") else " ") * len(tag.encode("utf-8", "surrogatepass"))


def _grammar(grammar: Grammar) -> Callable[[str], ParseFailure | None]:
    return lambda text: grammar_failure(grammar, text)


_PARSERS: dict[CodeLanguage, Callable[[str], ParseFailure | None]] = {
    CodeLanguage.PYTHON: _python,
    CodeLanguage.JSON: _json,
    CodeLanguage.SQL: _sql,
    CodeLanguage.TOML: _toml,
    CodeLanguage.XML: _xml,
    CodeLanguage.YAML: _yaml,
    CodeLanguage.JAVASCRIPT: _grammar(Grammar.JAVASCRIPT),
    CodeLanguage.TYPESCRIPT: typescript_failure,
    CodeLanguage.SHELL: _shell,
    CodeLanguage.HTML: _html,
    CodeLanguage.DOCKERFILE: _grammar(Grammar.DOCKERFILE),
}


@lru_cache(maxsize=_CACHE_SIZE)
def syntax_error(language: CodeLanguage, text: str) -> ParseFailure | None:
    """Where ``language``'s parser stops reading ``text``, or None when it reads it all."""
    try:
        return _PARSERS[language](text)
    except RecursionError:
        return ParseFailure("nesting too deep to parse")


#: Dialects a fenced SQL block may be written in, tried only after the default one fails.
SQL_DIALECTS = ("postgres", "mysql", "sqlite", "tsql", "bigquery", "snowflake", "duckdb")


def parses_in_sql_dialect(text: str) -> str | None:
    """The first of ``SQL_DIALECTS`` that reads ``text`` as the Floor reads SQL, or None."""
    for dialect in SQL_DIALECTS:
        if not isinstance(sql_statements(text, dialect), ParseFailure):
            return dialect
    return None


def parses_as_tsx(text: str, *, quick: bool = False) -> bool:
    """Whether TypeScript's JSX grammar reads ``text`` (a ``.tsx`` block tagged ``ts``)."""
    if quick and not _grammar_reads(Grammar.TSX, text):
        return False
    return typescript_failure(text, Grammar.TSX) is None


_QUICK = {CodeLanguage.JAVASCRIPT: Grammar.JAVASCRIPT, CodeLanguage.TYPESCRIPT: Grammar.TYPESCRIPT}


def reads_quickly(language: CodeLanguage, text: str) -> bool:
    """Whether ``language``'s parser reads ``text``, told fast when it does not.

    A tree-sitter language's parse is given up at its first error (``grammar_reads``),
    so a no may be wrong: for trying many candidate texts, where a false no is safe.
    """
    grammar = _QUICK.get(language)
    if grammar is not None and not _grammar_reads(grammar, text):
        return False
    return syntax_error(language, text) is None


def _grammar_reads(grammar: Grammar, text: str) -> bool:
    """``grammar_reads``, with TypeScript newer than its grammar in its older form too."""
    if grammar_reads(grammar, text):
        return True
    if grammar not in (Grammar.TYPESCRIPT, Grammar.TSX):
        return False
    older = older_form(text)
    return older != text and grammar_reads(grammar, older)
