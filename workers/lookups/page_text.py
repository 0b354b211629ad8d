"""A fetched body as text: what the quote check reads.

HTML loses its tags, scripts, styles and comments, and its entities are decoded; block
elements end lines so that words of two cells never join. Plain text is kept as it is.
Any other type gives no text: a quote is never looked for in a PDF's bytes. The bytes
are decoded by the charset the server names, else UTF-8, and an invalid byte becomes
U+FFFD rather than an error. The engine folds the text as the grounding checks fold
their sources (``squash``), so a quote matches across case, punctuation and line breaks.
"""

from __future__ import annotations

import codecs
import re
from html.parser import HTMLParser

from schemas.references import MAX_PAGE_TEXT_CHARS

_SKIPPED = frozenset({"script", "style", "noscript", "template", "svg"})
_BLOCKS = frozenset(
    {
        "p", "div", "br", "li", "tr", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6",
        "section", "article", "blockquote", "pre", "table", "ul", "ol", "dd", "dt", "title",
    }
)  # fmt: skip
_CHARSET = re.compile(r"charset\s*=\s*[\"']?([\w.:-]+)", re.I)
TEXT_TYPES = frozenset({"text/html", "application/xhtml+xml", "text/plain"})


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.size = 0
        self._skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIPPED:
            self._skipping += 1
        elif tag in _BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED:
            self._skipping = max(0, self._skipping - 1)
        elif tag in _BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skipping and self.size < MAX_PAGE_TEXT_CHARS:
            self.parts.append(data)
            self.size += len(data)


def media_type(content_type: str) -> str:
    """``text/html`` of ``text/html; charset=utf-8``."""
    return content_type.split(";", 1)[0].strip().lower()


def decode(body: bytes, content_type: str) -> str:
    """The body as a string in its declared charset (UTF-8 when none or unknown)."""
    named = _CHARSET.search(content_type)
    charset = named.group(1) if named else "utf-8"
    try:
        codecs.lookup(charset)
    except LookupError:
        charset = "utf-8"
    return body.decode(charset, errors="replace")


def page_text(body: bytes, content_type: str) -> tuple[str, bool]:
    """The body's text, and whether it is a kind of page a quote can be looked for in."""
    kind = media_type(content_type)
    if kind not in TEXT_TYPES and not (kind == "" and body.lstrip()[:1] == b"<"):
        return "", False
    text = decode(body, content_type)
    if kind == "text/plain":
        return text[:MAX_PAGE_TEXT_CHARS], True
    parser = _Text()
    parser.feed(text)
    parser.close()
    joined = re.sub(r"[ \t\r\f\v]+", " ", "".join(parser.parts))
    return re.sub(r"\n\s*\n+", "\n", joined).strip()[:MAX_PAGE_TEXT_CHARS], True
