"""Node output as a reviewer reads it, and never as a browser would run it.

Code is highlighted by Pygments (which escapes it), JSON is pretty-printed first,
markdown goes through markdown-it with raw HTML off (tags come out as text; its link
check drops ``javascript:``, ``vbscript:`` and ``data:`` targets) and images off (a
remote image would call out when the page opens). Text is left to the template's
autoescape. Highlighting uses CSS classes, served from our own origin, so the strict
Content-Security-Policy needs no inline styles.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markupsafe import Markup
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import (
    BashLexer,
    DockerLexer,
    HtmlLexer,
    JavascriptLexer,
    JsonLexer,
    PythonLexer,
    SqlLexer,
    TOMLLexer,
    TypeScriptLexer,
    XmlLexer,
    YamlLexer,
)

from schemas.code import Position
from schemas.request import NodeOutput, OutputKind

_FORMATTER = HtmlFormatter(cssclass="highlight", wrapcode=True)
_MARKDOWN = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
_MARKDOWN.disable("image")
_LEXERS: dict[OutputKind, type[Lexer]] = {
    OutputKind.PYTHON: PythonLexer,
    OutputKind.SQL: SqlLexer,
    OutputKind.JSON: JsonLexer,
    OutputKind.YAML: YamlLexer,
    OutputKind.TOML: TOMLLexer,
    OutputKind.JAVASCRIPT: JavascriptLexer,
    OutputKind.TYPESCRIPT: TypeScriptLexer,
    OutputKind.SHELL: BashLexer,
    OutputKind.HTML: HtmlLexer,
    OutputKind.XML: XmlLexer,
    OutputKind.DOCKERFILE: DockerLexer,
}


@dataclass(frozen=True, slots=True)
class Rendered:
    """An output ready for the page: trusted HTML, or text for the template to escape."""

    html: Markup | None
    text: str | None
    note: str | None = None


def highlight_css() -> str:
    """The stylesheet of the highlighted code, served as ``/static/highlight.css``."""
    defs = _FORMATTER.get_style_defs  # untyped in the stubs
    return str(defs(".highlight"))  # type: ignore[no-untyped-call]


def render_output(output: NodeOutput) -> Rendered:
    """Render ``output`` by its declared kind."""
    content = output.content
    if output.kind is OutputKind.MARKDOWN:
        return Rendered(Markup(_MARKDOWN.render(content)), None)  # raw HTML is off
    if output.kind is OutputKind.JSON:
        pretty = _pretty_json(content)
        if pretty is None:
            return Rendered(None, content, "not valid JSON: shown as sent")
        return Rendered(Markup(highlight(pretty, JsonLexer(), _FORMATTER)), None)
    lexer = _LEXERS.get(output.kind)
    if lexer is None:
        return Rendered(None, content)
    return Rendered(Markup(highlight(content, lexer(), _FORMATTER)), None)


def position_text(position: Position) -> str:
    """Where a finding is, as a reviewer reads it: ``block 2, line 3, column 5 (output line 9)``."""
    where = f"line {position.line}, column {position.column}"
    if position.block is None:
        return where
    shown = f"block {position.block}, {where}"
    return (
        shown if position.output_line is None else f"{shown} (output line {position.output_line})"
    )


def _pretty_json(content: str) -> str | None:
    try:
        return json.dumps(json.loads(content), indent=2, ensure_ascii=False)
    except (ValueError, RecursionError):
        return None
