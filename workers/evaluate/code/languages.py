"""Which language a fenced block's tag names, or an untagged block's first line declares."""

from __future__ import annotations

import re

from schemas.code import CodeLanguage

_L = CodeLanguage

#: Info-string tags (lower-cased first word) and the parser each one names.
TAGS: dict[str, CodeLanguage] = {
    **dict.fromkeys(("python", "py", "python3", "py3", "ipython", "ipython3"), _L.PYTHON),
    **dict.fromkeys(("json", "jsonc", "jsonl", "ndjson", "geojson"), _L.JSON),
    **dict.fromkeys(("yaml", "yml"), _L.YAML),
    "toml": _L.TOML,
    **dict.fromkeys(("sql", "mysql", "postgresql", "postgres", "pgsql", "sqlite"), _L.SQL),
    **dict.fromkeys(("javascript", "js", "jsx", "mjs", "cjs", "node"), _L.JAVASCRIPT),
    **dict.fromkeys(("typescript", "ts", "tsx", "mts", "cts"), _L.TYPESCRIPT),
    **dict.fromkeys(("bash", "sh", "shell", "zsh"), _L.SHELL),
    **dict.fromkeys(("html", "htm", "xhtml"), _L.HTML),
    **dict.fromkeys(("xml", "svg", "xsd", "xsl", "xslt", "rss", "atom"), _L.XML),
    **dict.fromkeys(("dockerfile", "docker", "containerfile"), _L.DOCKERFILE),
}

#: What an untagged block's first line can make certain; nothing else is guessed.
_SHEBANG = re.compile(r"#!\s*(?:/usr)?(?:/local)?/bin/(?:env\s+(?:-\S+\s+)*)?(\w+)")
_SHEBANG_LANGUAGES = {
    "bash": _L.SHELL,
    "sh": _L.SHELL,
    "python": _L.PYTHON,
    "python3": _L.PYTHON,
    "node": _L.JAVASCRIPT,
}
_XML_DECLARATION = re.compile(r"<\?xml\s+version=")
_HTML_DOCTYPE = re.compile(r"<!doctype\s+html\b", re.I)


def tag_of(info: str) -> str:
    """The info string's first word, lower-cased, braces dropped (``{.python}``, ``py{1,3}``)."""
    word = info.strip().split(maxsplit=1)[0] if info.strip() else ""
    word = word.strip("{}.").split("{", 1)[0].split(",", 1)[0]
    return word.casefold()[:40]


def language_of(tag: str, body: str) -> CodeLanguage | None:
    """The language a block is parsed as: its tag's, or an untagged block's certain one."""
    if tag:
        return TAGS.get(tag)
    first = body.lstrip("\ufeff").lstrip("\n").split("\n", 1)[0].strip()
    shebang = _SHEBANG.match(first)
    if shebang is not None:
        return _SHEBANG_LANGUAGES.get(shebang.group(1))
    if _XML_DECLARATION.match(first):
        return _L.XML
    if _HTML_DOCTYPE.match(first):
        return _L.HTML
    return None
