"""The slips a model makes in code, made on purpose in real files.

Each operator proposes a few candidate mutants of one file, at places chosen by a hash of
the item's id (deterministic, never by looking at the engine). The harness keeps, for
each operator, the first candidate that the language's reference parser rejects
(``code_reference``): a mutant is a defect because an independent parser says so, not
because the engine does. An operator that does not apply to a file proposes nothing.

- ``dropped_bracket``: one closing ``)``, ``]`` or ``}`` removed (``>`` for XML/HTML tags);
- ``missing_colon``: a block header's ``:`` (Python), a mapping key's ``:`` (YAML, JSON,
  JavaScript/TypeScript object literals) or a TOML key's ``=`` removed;
- ``broken_indentation``: a line of an indented block pushed right by one or two spaces
  (Python, YAML);
- ``unterminated_string``: a string literal's closing quote removed;
- ``trailing_comma``: a comma before a closing bracket (JSON, TOML inline tables), or
  after a select list's last column (SQL);
- ``dropped_terminator``: a shell block's ``fi``/``done``/``esac``, or an XML end tag,
  removed;
- ``truncated``: the file cut off at a line between 60% and 90% of its length, as a
  token limit cuts an answer.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Callable, Iterator

from schemas.code import CodeLanguage

_L = CodeLanguage
CANDIDATES = 4

_PY_HEADER = re.compile(
    r"^[ \t]*(?:def|class|if|elif|else|for|while|try|except|finally|with)\b[^\n]*:[ \t]*$", re.M
)
_YAML_KEY = re.compile(r"^[ \t]*(?:- )?[A-Za-z_][\w.-]*(:)(?:[ \t]|$)", re.M)
_JSON_KEY = re.compile(r'"(?:\\.|[^"\\\n])*"[ \t]*(:)')
_JS_KEY = re.compile(r"^[ \t]+[A-Za-z_$][\w$]*[ \t]*(:)[ \t]*[^\s:]", re.M)
_TOML_KEY = re.compile(r"^[ \t]*[A-Za-z0-9_.\"-]+[ \t]*(=)", re.M)
_STRING = re.compile(r"\"[^\"\\\n]{1,60}(\")|'[^'\\\n]{1,60}(')")
_CLOSERS = re.compile(r"[)\]}]")
_TAG_END = re.compile(r"<[A-Za-z][^<>\n]*(>)")
_BEFORE_CLOSE = re.compile(r"[\w\"'\]}](\s*)[}\]]")
_SQL_FROM = re.compile(r"\S(\s+)FROM\b", re.I)
_SHELL_END = re.compile(r"^[ \t]*(?:fi|done|esac)\b[^\n]*$", re.M)
_XML_END_TAG = re.compile(r"</[A-Za-z][\w:.-]*>")


def _rng(item_id: str, operator: str) -> random.Random:
    return random.Random(hashlib.sha256(f"{item_id}:{operator}".encode()).digest())


def _spots(pattern: re.Pattern[str], text: str, group: int = 0) -> list[tuple[int, int]]:
    """Where ``pattern`` matches: the whole match, or its first group that took part."""
    spots = []
    for match in pattern.finditer(text):
        taken = [g for g in range(group, pattern.groups + 1) if match.group(g) is not None]
        index = taken[0] if group else 0
        spots.append((match.start(index), match.end(index)))
    return spots


def _removing(text: str, spots: list[tuple[int, int]], rng: random.Random) -> Iterator[str]:
    for start, end in rng.sample(spots, min(CANDIDATES, len(spots))):
        yield text[:start] + text[end:]


def dropped_bracket(language: CodeLanguage, text: str, rng: random.Random) -> Iterator[str]:
    """One closing bracket (or a tag's ``>``) removed."""
    if language in (_L.HTML, _L.XML):
        return _removing(text, _spots(_TAG_END, text, 1), rng)
    return _removing(text, _spots(_CLOSERS, text), rng)


_COLONS: dict[CodeLanguage, re.Pattern[str]] = {
    _L.YAML: _YAML_KEY,
    _L.JSON: _JSON_KEY,
    _L.JAVASCRIPT: _JS_KEY,
    _L.TYPESCRIPT: _JS_KEY,
    _L.TOML: _TOML_KEY,
}


def missing_colon(language: CodeLanguage, text: str, rng: random.Random) -> Iterator[str]:
    """A block header's, a key's or a TOML assignment's separator removed."""
    if language is _L.PYTHON:
        found = [_last_colon(text, m.start(), m.end()) for m in _PY_HEADER.finditer(text)]
        return _removing(text, [s for s in found if s is not None], rng)
    pattern = _COLONS.get(language)
    return _removing(text, _spots(pattern, text, 1), rng) if pattern else iter(())


def _last_colon(text: str, start: int, end: int) -> tuple[int, int] | None:
    at = text.rfind(":", start, end)
    return None if at < 0 else (at, at + 1)


def broken_indentation(language: CodeLanguage, text: str, rng: random.Random) -> Iterator[str]:
    """An indented line pushed right, off its block's column."""
    if language not in (_L.PYTHON, _L.YAML):
        return iter(())
    lines = text.split("\n")
    spots = [
        i
        for i in range(1, len(lines))
        if lines[i].startswith((" ", "\t"))
        and lines[i].strip()
        and not lines[i].lstrip().startswith("#")
        and _indent(lines[i]) == _indent(lines[i - 1])
    ]
    return (
        "\n".join([*lines[:i], " " * (1 + i % 2) + lines[i], *lines[i + 1 :]])
        for i in rng.sample(spots, min(CANDIDATES, len(spots)))
    )


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def unterminated_string(language: CodeLanguage, text: str, rng: random.Random) -> Iterator[str]:
    """A string literal's closing quote removed."""
    if language in (_L.HTML, _L.DOCKERFILE):
        return iter(())
    return _removing(text, _spots(_STRING, text, 1), rng)


def trailing_comma(language: CodeLanguage, text: str, rng: random.Random) -> Iterator[str]:
    """A comma where the format allows none: before a closing bracket, after a last column."""
    if language is _L.SQL:
        spots = [(m.start(1), m.start(1)) for m in _SQL_FROM.finditer(text)]
    elif language in (_L.JSON, _L.TOML):
        spots = [(m.start(1), m.start(1)) for m in _BEFORE_CLOSE.finditer(text)]
    else:
        return iter(())
    return (text[:s] + "," + text[s:] for s, _ in rng.sample(spots, min(CANDIDATES, len(spots))))


def dropped_terminator(language: CodeLanguage, text: str, rng: random.Random) -> Iterator[str]:
    """A shell compound's closing keyword, or an XML end tag, removed."""
    if language is _L.SHELL:
        return _removing(text, _spots(_SHELL_END, text), rng)
    if language is _L.XML:
        return _removing(text, _spots(_XML_END_TAG, text), rng)
    return iter(())


def truncated(language: CodeLanguage, text: str, rng: random.Random) -> Iterator[str]:
    """The file cut off at a line between 60% and 90% of its length."""
    starts = [m.end() for m in re.finditer(r"\n", text)]
    spots = [s for s in starts if 0.6 * len(text) <= s <= 0.9 * len(text)]
    return (text[:s] for s in rng.sample(spots, min(CANDIDATES, len(spots))))


Operator = Callable[[CodeLanguage, str, random.Random], Iterator[str]]
OPERATORS: dict[str, Operator] = {
    "dropped_bracket": dropped_bracket,
    "missing_colon": missing_colon,
    "broken_indentation": broken_indentation,
    "unterminated_string": unterminated_string,
    "trailing_comma": trailing_comma,
    "dropped_terminator": dropped_terminator,
    "truncated": truncated,
}


def candidates(language: CodeLanguage, item_id: str, text: str) -> dict[str, list[str]]:
    """Each operator's candidate mutants of ``text`` (none that equal the original)."""
    return {
        name: [m for m in operator(language, text, _rng(item_id, name)) if m != text]
        for name, operator in OPERATORS.items()
    }
