"""What documentation does to code on purpose, which a parser would take for an error.

A writer elides (``...``, ``# ...``, ``// rest unchanged``), shows a console session
(``$ ``, ``>>> ``, ``In [1]:``) or a diff, quotes a fragment (a method, an object literal, a
WHERE clause's dialect), fills in a template (``{{ }}``, ``{% %}``, ``${VAR}``) or leaves a
placeholder (``<your-token>``, ``<id|token>``, an optional argument's ``options?``). None
of that is a defect of the code, and none is ever a finding. Each helper here is a plain
function of a block's text.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Iterator

from schemas.code import CodeLanguage

_NOT_NEWLINE = re.compile(r"[^\n]")
_L = CodeLanguage

_PROMPT = re.compile(
    r"^[ \t]*(?:\$|>>>|In \[\d*\]:|PS(?: [A-Za-z]:\\[^>\n]*)?>|[A-Za-z]:\\[^>\n]*>|❯|➜"
    r"|[\w.-]+@[\w.-]+:[^$\n]*\$)(?:[ \t]|$)",
    re.M,
)
_REPL_PROMPT = re.compile(r"^[ \t]*(?:>>>|In \[\d*\]:)(?:[ \t]|$)", re.M)
_DIFF_HEADER = re.compile(r"^(?:@@ |diff --git |\+\+\+ |--- a/)", re.M)
_DIFF_LINE = re.compile(r"^[+\- ]|^$")
#: ``...`` or ``…`` standing for code, not JavaScript's spread (``...args``) or a range (``a...b``).
_INLINE_ELISION = re.compile(r"(?<![\w.\])])(?:\.{3}|…)(?![\w.$\[{(\"'`])")
#: Languages in which a bare ``...`` is not code of their own (Python's Ellipsis, YAML's
#: document end, a shell word and markup text are).
_ELLIPSIS_FOREIGN = frozenset({_L.JSON, _L.JAVASCRIPT, _L.TYPESCRIPT, _L.SQL, _L.TOML})
#: A line of nothing but ``...`` (outside strings and comments): code left out (items, with
#: whatever commas stood between them, or a ``try``'s handlers).
_ELIDED_LINE = re.compile(r"^[ \t]*(?:\.{3}|…)[ \t]*$", re.M)
_TRY = re.compile(r"^([ \t]*)try[ \t]*:", re.M)
#: A whole-line comment that says no more than that code was left out: ``# ...``,
#: ``// rest unchanged``, ``/* ... more methods ... */``, ``<!-- snip -->``.
_ELISION_COMMENT = re.compile(
    r"^[ \t]*(?:#|//|--|/\*|<!--|;)(?=.*?(?:\.{3}|…|[a-z]{3}))[ \t]*(?:\.{3}|…)?[ \t]*"
    r"(?:(?:the )?rest(?: of (?:the )?(?:code|file|class|function|method|implementation|config))?"
    r"(?: (?:is )?(?:unchanged|omitted|elided|as before|the same|stays the same))?"
    r"|(?:more|other|remaining|existing|your) (?:code|lines|methods|fields|tests|logic|config)"
    r"(?: here| omitted| unchanged| goes here)?"
    r"|(?:code|lines?) (?:omitted|elided|removed for brevity)|snip(?:ped)?|etc\.?|and so on)?"
    r"[ \t]*(?:\.{3}|…)?[ \t]*(?:\*/|-->)?[ \t]*$",
    re.I | re.M,
)
#: A line showing what the line above returns: ``=>``, ``// =>``, ``# =>``, or a bare
#: ``~>`` (commented, ``//~>`` says "the same as", and elides nothing).
_RESULT = re.compile(r"^[ \t]*(?:(?:(?://|#)[ \t]*)?=>|~>)(?:[ \t]|$)")
#: A comment standing where an expression belongs: ``if (/* condition */)``.
_COMMENT_AS_CODE = re.compile(r"\([ \t]*/\*[^*\n]*\*/[ \t]*\)")
#: A name marked optional where a call passes it, as a signature writes it:
#: ``replaceTscAliasPaths(options?)``. Code never has a ``?`` before ``,`` or ``)`` (a
#: parameter's own ``x?`` is declared, and parses as written).
_OPTIONAL_ARGUMENT = re.compile(r"(?<=[\w$])\?(?=[ \t]*[,)])")
#: A comment standing where a member's value belongs: ``caStore: /* PEM certs */,``.
_COMMENT_AS_VALUE = re.compile(r"(?<=:)[ \t]*/\*[^*\n]*\*/(?=[ \t]*(?:[,}]|$))", re.M)
#: A comment-only line: in Python it may stand for a block's body.
_COMMENT_LINE = re.compile(r"^([ \t]*)#.*$", re.M)
_TEMPLATE = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}|<%.*?%>")
_OWN_BRACES = frozenset({_L.PYTHON, _L.JAVASCRIPT, _L.TYPESCRIPT})
_DOLLAR_BRACE = re.compile(r"\$\{[^}\n]*\}")
#: Languages in which ``${NAME}`` is their own syntax, not a template's.
_OWN_DOLLAR_BRACE = frozenset({_L.SHELL, _L.JAVASCRIPT, _L.TYPESCRIPT, _L.DOCKERFILE, _L.YAML})
_PLACEHOLDER = re.compile(r"<[A-Za-z][\w .:/|-]{0,60}>")
#: Languages in which ``<word>`` is not syntax of their own, so it is a writer's placeholder.
_PLACEHOLDER_LANGUAGES = frozenset({_L.SHELL, _L.SQL, _L.PYTHON, _L.JSON, _L.TOML, _L.DOCKERFILE})
_STAND_IN = {_L.JSON: "null", _L.TOML: "0", _L.SHELL: "X", _L.DOCKERFILE: "X"}
_MAGIC = re.compile(r"^([ \t]*)[%!](?=[A-Za-z%])", re.M)
_JSON_COMMENT = re.compile(r'"(?:\\.|[^"\\\n])*"|//[^\n]*|/\*.*?\*/', re.S)
_LAST_COMMA = re.compile(r",\s*\Z")
#: Tags of JSON dialects in which a comma may stand before a closing bracket: VS Code's
#: JSON with comments (``settings.json``, ``tsconfig.json``) reads ``[1, 2,]``.
TRAILING_COMMA_TAGS = frozenset({"jsonc"})
_COMMA_BEFORE_CLOSER = re.compile(r",(?=\s*[}\]])")


def is_console_session(body: str) -> bool:
    """Whether the block opens with a prompt (``$ ``, ``>>> ``, ``In [1]:``): a session shown."""
    lines = (
        line for line in body.split("\n") if line.strip() and not line.lstrip().startswith("#")
    )
    first = next(lines, "")
    return _PROMPT.match(first) is not None


def has_prompt_line(language: CodeLanguage, body: str) -> bool:
    """Whether a shell block's line opens with a REPL's prompt: a session after a command.

    ``>>> `` or ``In [1]:`` after a ``pip install`` line shows the REPL that follows it;
    no script opens a line with either (outside its strings and comments). Only shell:
    in a Python file cut off inside a docstring, the docstring's doctest would look like
    code, and a cut-off file is a slip to find.
    """
    if language is not _L.SHELL or "<<" in body:
        return False  # a heredoc's lines are another program's input, prompts and all
    return _REPL_PROMPT.search(code_only(language, body)) is not None


def is_diff(body: str) -> bool:
    """Whether the block is a patch: hunk headers, or only ``+``, ``-`` and context lines."""
    if _DIFF_HEADER.search(body):
        return True
    lines = body.rstrip("\n").split("\n")
    added = any(line.startswith("+") for line in lines)
    removed = any(line.startswith("-") for line in lines)
    return added and removed and all(_DIFF_LINE.match(line) for line in lines)


def template_lines(language: CodeLanguage, body: str) -> list[int]:
    """The 1-based lines a template marks: ``{{ }}``, ``{% %}``, ``<% %>``, a foreign ``${VAR}``."""
    dollar = language not in _OWN_DOLLAR_BRACE
    return [
        number
        for number, line in enumerate(body.split("\n"), 1)
        if _TEMPLATE.search(line) or (dollar and _DOLLAR_BRACE.search(line))
    ]


def is_template_error(language: CodeLanguage, body: str, line: int | None) -> bool:
    """Whether a parse error at ``line`` may be a template's doing, not the code's.

    In Python, JavaScript and TypeScript ``{{`` is code (a format string's brace, a nested
    object, JSX): only an error on a marked line is the template's. Elsewhere an error at
    or after the first marked line may be (a Helm chart's ``{{- if }}`` shifts what follows).
    """
    marked = template_lines(language, body)
    if not marked:
        return False
    if language in _OWN_BRACES:
        return line in marked
    return line is None or line >= marked[0]


def elided_lines(language: CodeLanguage, body: str) -> list[int]:
    """The 1-based lines on which the writer left code out, or showed its result, in order.

    A line that opens with ``=>`` (``// =>``, ``# =>``, ``~>``) shows what the line above
    returns, as documentation writes it: what follows is output, and a parser reads the
    ``=>`` as part of the line above (an arrow function), so that line counts too. A line
    inside a block comment or a string (a doc comment's ``@example``, a docstring) is
    neither.
    """
    inline = language in _ELLIPSIS_FOREIGN
    code = code_only(language, body).split("\n") if inline else []
    inside = _inside_comments_and_strings(language, body)
    found: list[int] = []
    lines = body.split("\n")
    for number, line in enumerate(lines, 1):
        if number in inside:
            continue
        if language is _L.YAML and _yaml_elision(lines, number):
            found.append(number)
        elif _RESULT.match(line):
            found.extend((number - 1, number) if number > 1 else (number,))
        elif _ELISION_COMMENT.match(line) or (inline and _INLINE_ELISION.search(code[number - 1])):
            found.append(number)
    return sorted(set(found))


def handlers_left_out(language: CodeLanguage, body: str) -> str:
    """``body`` with the handlers of a ``try`` that a closing bare ``...`` left out, filled in.

    Python reads ``...`` as a statement (a stub's body), and stays strict about it
    everywhere; but ``try:``, its body, then ``...`` as the block's last line shows the
    handlers left out, and a ``try`` is the one statement that cannot end there. A
    stand-in ``except`` after it (the lines below the block, every position kept) reads
    the rest as written, so a slip before the ``...`` is still one. ``body`` unchanged
    when no such ``try`` is open.
    """
    if language is not _L.PYTHON:
        return body
    code = code_only(language, body).rstrip()
    last = code[code.rfind("\n") + 1 :]
    if not _ELIDED_LINE.fullmatch(last):
        return body
    depth = len(last) - len(last.lstrip())
    opened = [m.group(1) for m in _TRY.finditer(code) if len(m.group(1)) < depth]
    if not opened:
        return body
    return f"{body.rstrip()}\n{opened[-1]}except BaseException:\n{opened[-1]}    pass\n"


def items_elided(language: CodeLanguage, body: str) -> str:
    """``body`` read as items left out where it elides them, every position kept.

    A line of a bare ``...`` stands for items of a list or an object, and with them the
    commas between them (``[`` then ``...`` then ``"./setup.ts"``, no comma after the
    ``...``): it is blanked. A comma before an elided line that only a closing bracket
    follows led to the items left out (``],`` then ``// ...`` then ``}``): it is blanked
    too. Read without them, what is shown must still parse, so a slip beside them is
    still one.
    """
    if language not in _ELLIPSIS_FOREIGN:
        return body
    elided = elided_lines(language, body)
    code = code_only(language, body)
    for match in _ELIDED_LINE.finditer(code):
        start, end = match.span()
        body = body[:start] + blanked(body[start:end]) + body[end:]
    code = code_only(language, body)
    starts = [0, *(m.end() for m in re.finditer("\n", code))]
    for number in elided:
        after = code.find("\n", starts[number - 1])
        before = code[: starts[number - 1]].rstrip()
        if before.endswith(",") and after != -1 and code[after:].lstrip()[:1] in ("]", "}"):
            at = len(before) - 1
            body = body[:at] + " " + body[at + 1 :]
    return body


def _yaml_elision(lines: list[str], number: int) -> bool:
    """Whether line ``number`` is a bare ``...`` that stands for YAML left out.

    At a line's start after a document, ``...`` ends it, and inside a block scalar it is
    text. Before any document (``...`` then ``jobs:``), or as the value a key opens on the
    line above (``get:`` then, further in, ``...``), it can only be the writer's.
    """
    line = lines[number - 1]
    if line.strip() != "...":
        return False
    before = [text for text in lines[: number - 1] if text.strip()]
    if not before:
        return True
    above = before[-1]
    indent = len(line) - len(line.lstrip())
    return above.rstrip().endswith(":") and indent > len(above) - len(above.lstrip())


_STRINGS_AND_COMMENTS = {
    _L.SQL: re.compile(r"'(?:''|[^'])*'|\"[^\"]*\"|--[^\n]*|/\*.*?\*/", re.S),
    _L.TOML: re.compile(r"\"(?:\\.|[^\"\\\n])*\"|'[^'\n]*'|#[^\n]*"),
    _L.SHELL: re.compile(r"'[^']*'|\"(?:\\.|[^\"\\])*\"|(?<![^\s;|&(])#[^\n]*"),
    _L.PYTHON: re.compile(
        r"\"\"\".*?\"\"\"|'''.*?'''|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'|#[^\n]*", re.S
    ),
}
_C_LIKE = re.compile(
    r"\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'|`(?:\\.|[^`\\])*`|//[^\n]*|/\*.*?\*/", re.S
)


_MULTILINE_COMMENTS_AND_STRINGS = frozenset({_L.PYTHON, _L.JAVASCRIPT, _L.TYPESCRIPT, _L.SQL})


def _inside_comments_and_strings(language: CodeLanguage, body: str) -> set[int]:
    """The 1-based lines that begin inside a block comment or a string of several lines.

    Only where the language has them (docstrings, ``/* */``, template literals): elsewhere
    a quote or a ``/*`` (a YAML glob's) is text, and opens nothing.
    """
    if language not in _MULTILINE_COMMENTS_AND_STRINGS:
        return set()
    pattern = _STRINGS_AND_COMMENTS.get(language, _C_LIKE)
    inside: set[int] = set()
    for match in pattern.finditer(body):
        first = body.count("\n", 0, match.start()) + 1
        inside.update(range(first + 1, first + match.group(0).count("\n") + 1))
    return inside


def blanked(text: str) -> str:
    """``text`` as spaces, newlines kept: what stood there is gone, every position holds."""
    return _NOT_NEWLINE.sub(" ", text)


def code_only(language: CodeLanguage, body: str) -> str:
    """``body`` with its strings and comments blanked, newlines kept: where ``...`` is code."""
    pattern = _STRINGS_AND_COMMENTS.get(language, _C_LIKE)
    return pattern.sub(lambda m: blanked(m.group(0)), body)


def neutralised(language: CodeLanguage, body: str) -> str:
    """The block with inline elisions, placeholders and magics standing in as code.

    Every line keeps its number, so a parser's position still points into the block.
    """
    text = body
    if language in _ELLIPSIS_FOREIGN:
        text = _INLINE_ELISION.sub(_STAND_IN.get(language, "_"), text)
    if language in _PLACEHOLDER_LANGUAGES:
        text = _PLACEHOLDER.sub(_STAND_IN.get(language, "_"), text)
    if language is _L.PYTHON:
        text = _MAGIC.sub(r"\1pass  #", text)
    if language in (_L.JAVASCRIPT, _L.TYPESCRIPT):
        text = _COMMENT_AS_CODE.sub(lambda m: "(_" + " " * (len(m.group(0)) - 3) + ")", text)
        text = _OPTIONAL_ARGUMENT.sub(" ", text)
        text = _COMMENT_AS_VALUE.sub(lambda m: " _" + " " * (len(m.group(0)) - 2), text)
    if language is _L.JSON:
        text = _JSON_COMMENT.sub(_keep_strings_blank_comments, text)
    return text


def in_dialect(tag: str, language: CodeLanguage, body: str) -> str:
    """``body`` as its tag's dialect reads it, every position kept.

    A ``jsonc`` block's commas before a closing bracket are allowed there, so they are
    blanked (not those in strings or comments, nor one before a string); under ``json``
    the same comma is a slip.
    """
    if language is not _L.JSON or tag not in TRAILING_COMMA_TAGS:
        return body
    view = _JSON_COMMENT.sub(_filled, body)
    spots = {m.start() for m in _COMMA_BEFORE_CLOSER.finditer(view)}
    return "".join(" " if at in spots else char for at, char in enumerate(body))


def _filled(match: re.Match[str]) -> str:
    """A string as a word of its length (a comma before it is no trailing one), a comment blank."""
    found = match.group(0)
    return "_" * len(found) if found.startswith('"') else blanked(found)


def synopsis_left_open(language: CodeLanguage, body: str) -> bool:
    """Whether a shell block with ``<placeholders>`` leaves a square bracket open or unopened.

    Such a block is a command's synopsis, its brackets the optional parts
    (``npm run <command> [-- <args>]``): whatever stands in for the placeholders, a
    bracket left open is a slip in it, so the placeholders excuse no error of bash's.
    """
    if language is not _L.SHELL or _PLACEHOLDER.search(body) is None:
        return False
    depth = 0
    for char in code_only(language, body):
        if char == "[":
            depth += 1
        elif char == "]":
            if depth == 0:
                return True
            depth -= 1
    return depth != 0


def _keep_strings_blank_comments(match: re.Match[str]) -> str:
    found = match.group(0)
    if found.startswith('"'):
        return found
    return blanked(found)


def fragment_readings(language: CodeLanguage, text: str) -> Iterator[tuple[str, str, bool]]:
    """``text`` as the fragments an editor would read it as: (wrapped text, how, in place).

    In place: the reading puts a line of its own before the code and one after, and
    leaves every line of the code as it was, so a failure's position, one line up,
    points into the block (a dedented reading moves columns, and is not in place). An
    opener on the code's first line would hide what a parser reads only there (a
    TypeScript ``/// <reference>`` directive).
    """
    if language is _L.PYTHON:
        dedented = textwrap.dedent(text)
        yield dedented, "an indented fragment, dedented", False
        yield _COMMENT_LINE.sub(r"\1pass", dedented), "comments standing for bodies", False
        # A value shown as printed: ``pprint``'s list items without their brackets.
        yield "(\n" + dedented + "\n)", "an expression", False
    elif language is _L.JSON:
        yield "{\n" + text + "\n}", "object members", True
        yield "[\n" + text + "\n]", "array items", True
        # Members quoted from a longer object keep the comma that led to the next one;
        # an answer cut off there leaves a bracket open, and stays broken.
        cut = _LAST_COMMA.sub("", text)
        if cut != text and _balanced(cut):
            yield "{\n" + cut + "\n}", "object members cut from a longer object", True
            yield "[\n" + cut + "\n]", "array items cut from a longer array", True
    elif language in (_L.JAVASCRIPT, _L.TYPESCRIPT):
        yield "(\n" + text + "\n)", "an expression", True
        yield "({\n" + text + "\n})", "object members", True
        yield "class _ {\n" + text + "\n}", "class members", True
        yield "async function* _() {\n" + text + "\n}", "a function body", True
        if text.lstrip().startswith(".") and not text.lstrip().startswith(".."):
            yield "_\n" + text, "a method chain's continuation", True
    elif language is _L.XML and not text.lstrip().startswith("<?xml"):
        yield "<_>\n" + text + "\n</_>", "elements without one root", True


_SKIPPED = re.compile(
    r"\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'|//[^\n]*|/\*.*?\*/|#[^\n]*", re.S
)
_PAIRS = {"(": ")", "[": "]", "{": "}"}


def closed(text: str) -> str | None:
    """``text`` with the brackets an elision left open closed after it; None if none are open.

    Strings and comments are skipped; a closing bracket that matches nothing means the text
    is not merely cut short, so nothing is closed.
    """
    stack = _still_open(text)
    return text.rstrip() + "\n" + "".join(reversed(stack)) + "\n" if stack else None


def _still_open(text: str) -> list[str] | None:
    """The closers of the brackets ``text`` leaves open, innermost last.

    None when a closing bracket matches nothing; strings and comments are skipped.
    """
    stack: list[str] = []
    for char in _SKIPPED.sub(" ", text):
        if char in _PAIRS:
            stack.append(_PAIRS[char])
        elif char in ")]}" and (not stack or stack.pop() != char):
            return None
    return stack


def _balanced(text: str) -> bool:
    """Whether every bracket ``text`` opens (outside strings and comments) it closes."""
    return _still_open(text) == []


def json_sequence(text: str) -> bool:
    """Whether ``text`` is two or more whole JSON documents one after another."""
    decoder, at, count = json.JSONDecoder(), 0, 0
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at >= len(text):
            return count > 1
        try:
            _, at = decoder.raw_decode(text, at)
        except (ValueError, RecursionError):
            return False
        count += 1


def json_lines(text: str) -> list[str]:
    """The non-blank lines of a block that may be JSON Lines."""
    return [line for line in text.split("\n") if line.strip()]
