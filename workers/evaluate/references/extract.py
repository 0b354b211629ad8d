"""The URLs an output cites, and the quotes it attributes to each.

A URL is cited by a markdown link, a bare URL, a DOI (``doi:10.1000/182``, ``DOI
10.1000/182``: resolved at https://doi.org/), or a reference-list entry that a marker
(``[3]``) points to. Code is no citation: text in fences and inline code spans is not read,
and of a Python output only the docstrings are (``links.stated_texts``).

A quotation is attributed to a URL when exactly one URL stands with it: in its sentence
(inline, or through a marker), else in its paragraph. Two candidates attribute it to
neither: the check never guesses which page a quote came from. A ``#:~:text=`` fragment
quotes its own URL. A quoted title inside a reference entry is a title, not a quote.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from urllib.parse import quote, unquote, urlsplit, urlunsplit

from schemas.references import MAX_URL_CHARS, CitedUrl
from workers.evaluate.wall.grounding.claims import QUOTE, looked_up_whole
from workers.evaluate.wall.grounding.reference_list import reference_entries

#: A URL runs to a space, a quote, an angle bracket or an unbalanced bracket; one level of
#: balanced parentheses stays (``https://en.wikipedia.org/wiki/Mercury_(planet)``).
_URL = re.compile(r"""\bhttps?://(?:[^\s<>"'`\\()\[\]{}]|\([^\s()<>"'`]*\))+""", re.I)
_DOI = re.compile(r"\bdoi(?::\s*|\s+)(10\.\d{4,9}/[^\s\"'<>`\]\[]+)", re.I)
_TRAILING = ".,;:!?*_~"
_MARKER = re.compile(r"(?<![\w\]\[])\[(\d{1,3})\](?![:(\[])")
_PARAGRAPH = re.compile(r"\n\s*\n")
TEXT_DIRECTIVE = ":~:"
#: A URL shown when it is too long to fetch: its head only.
SHOWN_CHARS = 200
#: Quotations looked at per output: a hostile one may hold thousands.
MAX_QUOTES = 200


@dataclass(frozen=True, slots=True)
class Mention:
    """One place a URL is cited: where, and the URL as it will be fetched."""

    start: int
    end: int
    url: str
    fragment_quotes: tuple[str, ...] = ()
    overlong: bool = False
    """Longer than a URL the lane fetches: ``url`` is its head, for the record."""


@dataclass(slots=True)
class _Cited:
    url: str
    overlong: bool
    label: str | None = None
    quotes: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Citations:
    """What an output cites: fetchable URLs, and URLs too long to fetch (their heads)."""

    urls: tuple[CitedUrl, ...] = ()
    overlong: tuple[CitedUrl, ...] = ()


def cited_urls(prose: str) -> Citations:
    """Every URL ``prose`` cites, once each in order of first mention, with its quotes."""
    if "http" not in prose and "doi" not in prose.lower():
        return Citations()
    mentions = sorted(_mentions(prose), key=lambda m: m.start)
    if not mentions:
        return Citations()
    labels = _entry_urls(prose)
    cited: dict[str, _Cited] = {}
    for mention in mentions:
        entry = cited.setdefault(mention.url, _Cited(mention.url, mention.overlong))
        entry.quotes.extend(q for q in mention.fragment_quotes if q not in entry.quotes)
    for label, url in labels.items():
        if url in cited and cited[url].label is None:
            cited[url].label = label
    for quoted, url in _attributed_quotes(prose, mentions, labels):
        if quoted not in cited[url].quotes:
            cited[url].quotes.append(quoted)
    listed = [
        (
            c.overlong,
            CitedUrl(url=c.url, label=c.label, quotes=tuple(q[:1000] for q in c.quotes[:20])),
        )
        for c in cited.values()
    ]
    return Citations(
        urls=tuple(c for overlong, c in listed if not overlong),
        overlong=tuple(c for overlong, c in listed if overlong),
    )


def _mentions(prose: str) -> Iterator[Mention]:
    for match in _URL.finditer(prose):
        raw = match.group(0).rstrip(_TRAILING)
        url, quotes = _fetchable(raw)
        overlong = len(raw) > MAX_URL_CHARS
        yield Mention(match.start(), match.start() + len(raw), url, quotes, overlong)
    for match in _DOI.finditer(prose):
        doi = match.group(1).rstrip(_TRAILING)
        url = "https://doi.org/" + quote(doi, safe="/:;()._-<>")
        yield Mention(match.start(), match.start(1) + len(doi), url[:MAX_URL_CHARS])


def _fetchable(raw: str) -> tuple[str, tuple[str, ...]]:
    """The URL without its fragment (never sent), and the quotes a text fragment holds."""
    if len(raw) > MAX_URL_CHARS:
        return raw[:SHOWN_CHARS], ()
    base, _, fragment = raw.partition("#")
    quotes = _text_fragment(fragment) if TEXT_DIRECTIVE in fragment else ()
    try:
        parts = urlsplit(base)
        base = urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path, parts.query, ""))
    except ValueError:  # a bad port or bracket: the client names it unsupported
        pass
    return base, quotes


def _text_fragment(fragment: str) -> tuple[str, ...]:
    """``text=[prefix-,]start[,end][,-suffix]``: the start and end are quoted words."""
    directives = fragment.split(TEXT_DIRECTIVE, 1)[1]
    quotes: list[str] = []
    for directive in directives.split("&"):
        if not directive.startswith("text="):
            continue
        parts = [p for p in directive[5:].split(",") if p]
        parts = [p for p in parts if not p.endswith("-") and not p.startswith("-")]
        quotes.extend(unquote(p).strip() for p in parts[:2] if unquote(p).strip())
    return tuple(quotes)


def _entry_urls(prose: str) -> dict[str, str]:
    """Each labelled reference entry's URL (its first link or DOI)."""
    found: dict[str, str] = {}
    for entry in reference_entries(prose):
        if entry.label is None or entry.label in found:
            continue
        first = next(iter(sorted(_mentions(entry.text), key=lambda m: m.start)), None)
        if first is not None:
            found[entry.label] = first.url
    return found


def _attributed_quotes(
    prose: str, mentions: Sequence[Mention], labels: dict[str, str]
) -> Iterator[tuple[str, str]]:
    """(quote, url) for each quotation that exactly one URL stands with."""
    starts = [m.start for m in mentions]
    entry_lines = {e.line for e in reference_entries(prose)}
    line_starts = [0] + [m.end() for m in re.finditer("\n", prose)]
    for number, match in enumerate(QUOTE.finditer(prose)):
        quoted = match.group(1).strip()
        if number >= MAX_QUOTES:
            return
        if not looked_up_whole(quoted):
            continue
        if bisect_right(line_starts, match.start()) - 1 in entry_lines:
            continue  # a title in a reference entry
        inside = mentions[max(0, bisect_right(starts, match.start()) - 1)]
        if inside.start <= match.start() < inside.end:
            continue  # quote marks inside a URL
        for start, end in (_sentence(prose, match), _paragraph(prose, match)):
            near = mentions[bisect_left(starts, start) : bisect_left(starts, end)]
            urls = {m.url for m in near if not m.overlong}
            markers = _MARKER.findall(prose, start, end)
            urls |= {labels[f"[{n}]"] for n in markers if f"[{n}]" in labels}
            if urls:
                if len(urls) == 1:
                    yield quoted, urls.pop()
                break


def _sentence(prose: str, match: re.Match[str]) -> tuple[int, int]:
    """The sentence a quotation stands in, between full stops or line breaks.

    A URL's dots are no full stops: a space must follow one.
    """
    before = max(prose.rfind(". ", 0, match.start()), prose.rfind("\n", 0, match.start()))
    after = [i for i in (prose.find(". ", match.end()), prose.find("\n", match.end())) if i >= 0]
    return before + 1, min(after, default=len(prose))


def _paragraph(prose: str, match: re.Match[str]) -> tuple[int, int]:
    starts = [m.end() for m in _PARAGRAPH.finditer(prose, 0, match.start())]
    end = _PARAGRAPH.search(prose, match.end())
    return (starts[-1] if starts else 0), (end.start() if end else len(prose))
