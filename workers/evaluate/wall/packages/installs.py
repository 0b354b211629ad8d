"""Install commands and requirement lines in text: what a reader would install.

Scanned line by line over the whole text (fenced blocks are not told apart yet). A command
counts where a reader would run it: inside a backtick span, or at the start of a line
(after a shell prompt, a list bullet, ``sudo``, ``RUN``, or a ``&&``, ``;`` or ``|``). A
command in the middle of a sentence is prose about installing, not an instruction.
Requirement lines are lines that hold one requirement with a version (``numpy>=1.26``):
a bare word on a line is too often just a word.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass

from packaging.requirements import InvalidRequirement, Requirement

from workers.evaluate.wall.packages.names import is_valid_name

#: The package managers whose names come from the Python package index.
_COMMAND = re.compile(
    r"(?:(?:python(?:3(?:\.\d+)?)?|py)\s+-m\s+pip|pip(?:3(?:\.\d+)?)?|uv\s+pip|pipx|pipenv)"
    r"\s+install\b|(?:uv|poetry|pdm)\s+add\b",
    re.I,
)
#: Every command holds one of these words: lines without one are never parsed (a literal
#: alternation scans text many times faster than the command pattern itself).
_TRIGGER = re.compile(r"install|add|Install|Add|INSTALL|ADD")
#: What may stand before a command at the start of a line.
_LEAD = re.compile(
    r"^\s*(?:[-*+]\s+|\d+[.)]\s+)?(?:\(\S+\)\s*)?(?:[$#>%!]+\s*|PS>\s*|\S*>\s+)?"
    r"(?:sudo\s+(?:-\S+\s+)*|RUN\s+)?$"
)
_SEPARATOR = re.compile(r"(?:&&|\|\||;|\|)\s*(?:sudo\s+)?$")
#: Where a command's arguments end.
_END = re.compile(r"&&|\|\||;|\||`|\s#|\s>|\s<\s|\s2>")
_BACKTICKS = re.compile(r"`([^`\n]+)`")
#: Options that take a value, and those whose value names another index than the public one.
_VALUED = frozenset(
    "-r --requirement -c --constraint -e --editable -i --index-url --extra-index-url -f "
    "--find-links -t --target --prefix --root --python -p --group -G --source --extra -E "
    "--platform --python-version --implementation --abi --only-binary --no-binary --src "
    "--upgrade-strategy --progress-bar --cache-dir --log --proxy --retries --timeout "
    "--trusted-host --cert --client-cert --config-settings -C --global-option "
    "--install-option --index --default-index --optional --with --suffix --spec".split()
)
_PRIVATE = frozenset(
    "-i --index-url --extra-index-url -f --find-links --index --default-index --source".split()
)
#: English words that end a command written into a sentence (``pip install x and y``).
_PROSE = frozenset(
    "a an and as at but by for from if in into is it of on or so that the then this to "
    "use using via when where which while with".split()
)
_ARCHIVE = (".whl", ".tar.gz", ".tgz", ".zip", ".tar.bz2", ".tar.xz", ".egg")
_SPEC = r"(?:===|==|>=|<=|~=|!=|<|>)[ \t]*\d[\w.*+!-]*"
_REQUIREMENT_LINE = re.compile(
    rf"(?m)^[ \t]*(?:[-*+][ \t]+)?([A-Za-z0-9][A-Za-z0-9._-]*(?:\[[\w, .-]*\])?[ \t]*"
    rf"{_SPEC}(?:[ \t]*,[ \t]*{_SPEC})*(?:[ \t]*;[^#\n]*)?)[ \t]*(?:#[^\n]*)?$"
)
MAX_LINE_CHARS = 2000
#: Most names one text yields: no real answer installs more.
MAX_NAMED = 200


@dataclass(frozen=True, slots=True)
class Named:
    """A distribution the text tells a reader to install."""

    name: str
    """The name as written."""
    line: int
    """1-based line."""
    said: str
    """The command or requirement line, shortened, for the message."""
    private_index: bool = False
    """The command names another index (``--index-url``): the public one cannot settle it."""
    requirement: bool = False
    """A requirement line, not a command."""


def install_names(text: str) -> list[Named]:
    """Every distribution an install command or a requirement line in ``text`` names.

    At most ``MAX_NAMED``, in line order. Only the lines the scanners match are read, so
    text that installs nothing costs two regular-expression passes.
    """
    found: list[Named] = []
    for number, line in _lines_with(_TRIGGER, text):
        for start, command in _commands(line):
            said = command.strip()[:120]
            names, private = _arguments(command[len(start) :])
            found.extend(Named(n, number, said, private_index=private) for n in names)
        if len(found) >= MAX_NAMED:
            break
    for number, line in _lines_with(_REQUIREMENT_LINE, text):
        match = _REQUIREMENT_LINE.match(line)
        if match and (name := _requirement_name(match.group(1))):
            found.append(Named(name, number, match.group(1).strip()[:120], requirement=True))
        if len(found) >= 2 * MAX_NAMED:
            break
    found.sort(key=lambda named: named.line)
    return found[:MAX_NAMED]


def _lines_with(pattern: re.Pattern[str], text: str) -> Iterator[tuple[int, str]]:
    """(1-based number, line) of each line where ``pattern`` matches, each line once."""
    number, counted_to, last = 1, 0, -1
    for match in pattern.finditer(text):
        start = text.rfind("\n", 0, match.start()) + 1
        if start == last:
            continue
        number += text.count("\n", counted_to, start)
        counted_to = last = start
        end = text.find("\n", start)
        yield number, text[start : end if end >= 0 else len(text)][:MAX_LINE_CHARS]


def _commands(line: str) -> list[tuple[str, str]]:
    """(the command words, the command with its arguments) of each command on ``line``."""
    spans = [(m.start(1), m.end(1)) for m in _BACKTICKS.finditer(line)]
    out: list[tuple[str, str]] = []
    for match in _COMMAND.finditer(line):
        inside = next(((s, e) for s, e in spans if s <= match.start() < e), None)
        before = line[inside[0] if inside else 0 : match.start()]
        if not (_LEAD.match(before) or _SEPARATOR.search(before)):
            continue
        rest = line[match.end() : inside[1] if inside else len(line)]
        end = _END.search(rest)
        out.append((match.group(0), match.group(0) + (rest[: end.start()] if end else rest)))
    return out


def _arguments(arguments: str) -> tuple[list[str], bool]:
    """The distributions among a command's arguments, and whether another index is named."""
    try:
        tokens = shlex.split(arguments)
    except ValueError:
        tokens = arguments.split()
    names: list[str] = []
    private = skip = False
    for token in tokens:
        if skip:
            skip = False
            continue
        option = token.split("=", 1)[0]
        if token.startswith("-"):
            private = private or option in _PRIVATE
            skip = option in _VALUED and "=" not in token
            continue
        if token.lower() in _PROSE:
            break
        name = _argument_name(token)
        if name is not None:
            names.append(name)
    return names, private


def _argument_name(token: str) -> str | None:
    """The distribution an argument names, or None for a path, URL, archive or placeholder."""
    if token.startswith((".", "~", "$", "<", "[", "{")) or "/" in token or "\\" in token:
        return None
    if "://" in token or token.lower().endswith(_ARCHIVE) or token == "@":
        return None
    if "@" in token and not token.startswith("@"):  # poetry and uv: ``requests@^2.31``
        token = token.split("@", 1)[0]
    return _requirement_name(token)


def _requirement_name(text: str) -> str | None:
    try:
        requirement = Requirement(text)
    except InvalidRequirement:
        return None
    return requirement.name if not requirement.url and is_valid_name(requirement.name) else None
